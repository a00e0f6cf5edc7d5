// A small-sample guard for comparisons over few launches. The percentile bootstrap over L
// launches is too narrow when L is small (with 3 launches there are only 10 distinct
// resamples; Efron & Tibshirani 1993, §13.3), and measured here that showed: 3-vs-3 A/A
// splits of 8 identical launches were called regressions 10.7% of the time at alpha 0.05.
// Welch's t-test on the log of each launch's median accounts for the small number of
// launches through its degrees of freedom; compare requires both tests to agree.
#pragma once

#include "hierarchical.hpp"

namespace ringscale::analysis {

/// Two-sided p-value of Welch's t-test between the log launch medians of `a` and `b` (each
/// launch one observation). 1 when either side has fewer than 2 launches or no spread at all
/// on both sides with equal means; 0 when there is no spread and the means differ.
double welch_log_median_p(const launch_samples& a, const launch_samples& b);

} // namespace ringscale::analysis
