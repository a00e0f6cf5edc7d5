// Case records in memory (src/base/case_record.hpp, what the launcher's writer stores) as the
// analysis' case_data, so the code that answers questions about results files also answers
// them about a launch still running: the launcher's closing comparison of attention schemes
// ranks them with scheme_cells (crossover.hpp), as `ringscale-stats crossover` does.
#pragma once

#include "results.hpp"

#include "src/base/case_record.hpp"

#include <memory>
#include <string>

namespace ringscale::analysis {

/// `rec` as one case of `file`, group name `group`: its attributes (flat and identity), the
/// timings with each timed row's slowest rank (step_s), memory per rank. No checks: the
/// record comes from this process, not from a file. Pure.
case_data case_from_record(const results::case_record& rec,
                           const std::shared_ptr<const file_info>& file, const std::string& group);

} // namespace ringscale::analysis
