// Change points of a performance series (issues 37 and 49): binary segmentation, each split
// the best of a two-sample statistic over every split that leaves min_segment launches on
// each side, tested by permutation of the segment (the maximum statistic over splits, so the
// test accounts for having chosen the best split), with a minimum effect on the medians.
// The statistic (issue 49): how much a split lowers the segment's absolute deviations of the
// log launch medians about each side's median, each launch costing min(|r|, 3 noise) +
// 0.1 |r|. No rule rewrites a launch before the split is chosen: a spike, or a launch on the
// other of two baseline levels, costs about the cap on either side of any split, so it can
// neither pull the split nor hide a step, while each launch of a step on the wrong side costs
// the cap and more. The split is where the reduction is largest, tested by permutation (exact
// for exchangeable launches whatever their distribution, given the cap, which is the noise of
// the segment in its order). Segments over 400 launches are tested by their ranks (the
// capped deviations cost O(n^2) a permutation until issue 50 made them O(n log n),
// analysis/history/capped_deviations; the rule is kept). The other statistics are kept as the
// baselines of tests/bench/history_rates.cpp (analysis/statistics/README.md: tried and dropped).
// Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringscale::analysis::history {

/// The two-sample statistic of each split.
enum class change_statistic {
    capped,     ///< capped absolute deviations about each side's median (the method)
    ranks,      ///< exponent 2 on the ranks, placed by the capped deviations
    ranks_only, ///< exponent 2 on the ranks, placed where it is largest
    levels,     ///< exponent 2 on the log launch medians (least squares)
    energy1,    ///< exponent 1 on the log launch medians (E-divisive's energy distance)
    cleaned,    ///< issue 37: exponent 2 on log z-scores after a running-median outlier rule
};

struct change_options {
    /// Significance level of a history run (a night): the chance that any of its series is
    /// flagged by chance. Each series is tested at alpha / family (per_series).
    double alpha = 0.01;
    /// The series judged together in one run (those with 2 x min_segment launches or more):
    /// each is tested at alpha / family, so that a night of many A/A series raises a false
    /// change with a chance of at most alpha (Bonferroni). 1: one series alone.
    std::size_t family = 1;
    std::size_t min_segment = 3; ///< launches on each side of a change, at least
    double min_effect = 0.02;    ///< |median after / median before - 1| below this is no change
    std::size_t permutations = 999;
    std::uint64_t seed = 1;
    change_statistic statistic = change_statistic::capped;
    /// A series whose detectable step (90% power) is larger than this (or not known) is not
    /// decided: with so few launches for its noise, a step of 2x could pass unseen. At 70%,
    /// log 2 is 1.3x log 1.7, which lifts the power from 90% to about 99.5% for a test whose
    /// critical value is about 3 standard errors (tests/bench/history_rates: no 2x step
    /// missed in a judged series of 6 to 10 launches).
    double max_detectable = 0.7;
};

/// The options one series is tested with: alpha / family, and permutations x family (the
/// same resolution of p about the smaller alpha: 999 at 0.01 leaves 10 permutations above
/// the critical value), family 1. What every function below applies to its options first.
change_options per_series(change_options opt);

/// One change: the series moves at launch `index` (the first launch of the new level).
struct change_point {
    std::size_t index = 0;
    double p = 1; ///< permutation p-value of the split when it was found
};

/// The energy statistic Q(tau) (exponent 2) of every split of `y` (tau = 1..n-1 in element
/// tau-1; only tau with min_segment <= tau <= n - min_segment are meaningful). O(n).
std::vector<double> energy_statistics(const std::vector<double>& y);

/// The energy statistic with exponent 1 of every split of `y`, as energy_statistics. O(n^2).
std::vector<double> energy1_statistics(const std::vector<double>& y);

/// Mid-ranks of `y` (1..n; tied values share the mean of their ranks).
std::vector<double> mid_ranks(const std::vector<double>& y);

/// The change points of the series `x` (positive values, e.g. launch medians in seconds), in
/// ascending index. A split is kept when its permutation p <= alpha and its median ratio
/// moves by at least min_effect; each side is then searched again.
std::vector<change_point> find_change_points(const std::vector<double>& x,
                                             const change_options& opt);

/// Launch-to-launch noise of `x` as a log standard deviation (about the CV), robust to steps
/// and spikes: 1.4826 x median |successive log differences| / sqrt(2). NaN below 3 values.
double launch_noise(const std::vector<double>& x);

/// The smallest step (a fraction, 0.05 = 5%) a series of `n` launches with log noise `sigma`
/// detects with 90% power at level alpha, for a step at its middle, by a two-sided z-test of
/// the two halves at alpha over the candidate splits (Bonferroni); never below min_effect.
/// NaN when n < 2 x min_segment or sigma is not known. (Issue 37's stated step: it assumes
/// Gaussian launches; detectable_step below is the method's own.)
double min_detectable_step(std::size_t n, double sigma, const change_options& opt);

/// The smallest step (a fraction) that the method, as applied to `x` with its changes `cps`,
/// finds within one launch with 90% power, for a step at the series' middle: the launches'
/// log residuals about their segments' medians (so their spikes and levels stay) are
/// permuted, a step is planted, and the statistic's best split must pass the permutation
/// null's 1 - alpha quantile of the same residuals, within one launch of the step (200
/// replicates a size: the null's first 200 permutations, seeded by opt.seed). The step: up
/// from min_effect, doubling log(1 + step) until found, then bisection to 2% of log(1 + step);
/// a replicate found at one step counts as found at larger ones and one missed as missed at
/// smaller ones, so only the others are drawn again (issue 50: 6x less work). Never below
/// min_effect. NaN when x has fewer than 2 x min_segment launches or no step up to 1000x is.
/// A longer series than 100 launches: its newest 100 (what the newest launches can show).
double detectable_step(const std::vector<double>& x, const std::vector<change_point>& cps,
                       const change_options& opt);

} // namespace ringscale::analysis::history
