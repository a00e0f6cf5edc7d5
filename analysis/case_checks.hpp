// What the reader checks before it believes a case's timings: a damaged or hand-edited file
// must not turn into a figure. Each check names the first thing wrong in one line.
#pragma once

#include "results.hpp"

#include <string>

namespace ringscale::analysis {

/// Why the timings of an ok case cannot be trusted, or "" when they can: every time_s,
/// compute_s and comm_wait_s value finite and >= 0, warm-up flags 0 or 1, the world_size
/// attribute equal to the data's rank columns, and at least one timed (non-warm-up) row.
std::string timing_problem(const case_data& c);

/// Warm-up flags for a case stored without an is_warmup dataset: the first `warmup` rows
/// (from the case's "warmup" attribute). Empty when the attribute is absent or does not fit
/// the rows, so the caller can refuse to guess.
std::vector<std::uint8_t> warmup_from_attribute(const case_data& c);

} // namespace ringscale::analysis
