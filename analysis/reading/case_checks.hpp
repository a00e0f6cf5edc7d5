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

/// Why the accuracy fields of `c` (acc_*, DESIGN.md "Accuracy against fp64") cannot be
/// trusted, or "" when they can (or there are none): each error a number >= 0 or non-finite
/// (inf or NaN: an overflow, a result the accuracy view flags), the max and RMS of a tensor
/// given together with rms <= max where both are finite, a single-rank figure only beside the
/// distributed one, the samples whole numbers from 1 to 65536 and at most the sequence, key
/// figures only with sampled keys, the measurement's time finite and >= 0.
std::string accuracy_problem(const case_data& c);

/// Drop every acc_* attribute of `c` when accuracy_problem names one; returns the reason ("":
/// kept). The case itself is kept: its timings do not depend on them.
std::string drop_untrusted_accuracy(case_data& c);

/// Warm-up flags for a case stored without an is_warmup dataset: the first `warmup` rows
/// (from the case's "warmup" attribute). Empty when the attribute is absent or does not fit
/// the rows, so the caller can refuse to guess.
std::vector<std::uint8_t> warmup_from_attribute(const case_data& c);

} // namespace ringscale::analysis
