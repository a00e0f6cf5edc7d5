// Case records (src/base/case_record.hpp, what the launcher's writer stores and what the
// checked read of a results file returns) as the analysis' case_data: the one conversion, so
// ringscale-stats' reader builds its cases as the launcher's closing comparison of attention
// schemes does (it ranks them with scheme_cells, scheme_cells.hpp, as `ringscale-stats
// crossover` does).
#pragma once

#include "results.hpp"

#include "src/base/case_record.hpp"

#include <memory>
#include <string>

namespace ringscale::analysis {

/// `rec` as one case of `file`, group name `group`: its attributes (flat and identity), the
/// timings with each timed row's slowest rank (step_s), memory per rank (stored::arrays_of),
/// world_size from the timings or, without them, a plausible world_size attribute. No
/// checks: a record read from a file was checked when read (stored::read_case_record). Pure.
case_data case_from_record(const results::case_record& rec,
                           const std::shared_ptr<const file_info>& file, const std::string& group);

} // namespace ringscale::analysis
