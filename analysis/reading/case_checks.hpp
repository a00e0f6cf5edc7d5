// What the reader checks before it believes a case's data: a damaged or hand-edited file must
// not turn into a figure. Each check names the first thing wrong in one line. The checks
// themselves are the base library's (src/base/stored_case.hpp), which --resume applies too.
#pragma once

#include "analysis/cases/results.hpp"

#include <string>

namespace ringscale::analysis {

/// Why the data of an ok case of `c.world_size` ranks cannot be trusted, or "" when it can:
/// stored::data_problem (times
/// finite and >= 0, comm_wait_s within time_s, warm-up flags 0 or 1, the world_size
/// attribute equal to the data's rank columns, an ok case has a timed row, per-rank arrays
/// of world length and finite, derived factors positive).
std::string timing_problem(const case_data& c);

/// Warm-up flags for a case stored without an is_warmup dataset: the first `warmup` rows
/// (from the case's "warmup" attribute). Empty when the attribute is absent or does not fit
/// the rows, so the caller can refuse to guess.
std::vector<std::uint8_t> warmup_from_attribute(const case_data& c);

} // namespace ringscale::analysis
