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

/// Launch-to-launch noise of one side: the sample standard deviation of the log launch
/// medians (close to the coefficient of variation of the launch medians when small). NaN
/// with fewer than 2 launches.
double launch_log_sd(const launch_samples& s);

/// The smallest relative slowdown (new / base - 1) that Welch's test on the log launch medians
/// detects with probability `power` at two-sided level `alpha`, with the noise and launch
/// counts of `a` and `b`: exp((t(1 - alpha/2, df) + t(power, df)) * SE) - 1, the usual
/// normal-theory approximation with Welch-Satterthwaite df. NaN when either side has fewer
/// than 2 launches; 0 when neither has any spread.
double detectable_change(const launch_samples& a, const launch_samples& b, double alpha,
                         double power);

/// Launches per side that would make a slowdown of `change` detectable with probability
/// `power` at level `alpha`, if both sides kept the mean noise of `a` and `b` (pooled
/// variance, df = 2n - 2). 0 when the noise is unknown; at most `cap` (cap + 1: more needed).
std::size_t launches_needed(const launch_samples& a, const launch_samples& b, double change,
                            double alpha, double power, std::size_t cap = 1000);

} // namespace ringscale::analysis
