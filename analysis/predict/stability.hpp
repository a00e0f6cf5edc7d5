// Is the calibration stable across launches? (The same cases have given an attention rate of
// 23.2 GFLOP/s per core in one calibration and 104.7 in another as the machine's load
// moved.) CALIB's launches are taken round by round - the k-th launch of every case that has
// one, in the order the files were read (tests/bench/predict.sh interleaves its rounds) - and
// the figures fitted on each round alone, with bootstrap bands over that round's iterations.
// A figure whose bands in two rounds do not overlap is named: its value depends on when it
// was measured more than its own noise allows.
#pragma once

#include "calibrate.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::analysis::predict {

/// The observations of `set` reduced to their `k`-th launch (those without one left out).
calibration_set launch_round(const calibration_set& set, std::size_t k);

/// One line per figure (compute rates per device, link alpha and beta per level) whose
/// `level` bands, fitted on different launch rounds of `set`, do not overlap: "attention
/// rate (cpu ...): 23.2 GFLOP/s [22.9, 23.6] in launch round 1 against 104.7 [101, 108] in
/// round 2". Empty when CALIB has one launch per case, or when the rounds agree.
std::vector<std::string> unstable_figures(const calibration_set& set, std::size_t replicates,
                                          double level, std::uint64_t seed);

} // namespace ringscale::analysis::predict
