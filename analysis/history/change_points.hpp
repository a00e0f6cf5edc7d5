// Change points of a performance series (issue 37): E-divisive means (Matteson & James 2014)
// with the energy distance's exponent 2, which measures a step in level (the most powerful for
// a slowdown; exponent 1 also sees changes of shape but missed 3-sigma steps among outlier
// launches), by binary segmentation, each split tested by permutation
// (the maximum statistic over splits, so the test accounts for having chosen the best split),
// with a minimum segment length and a minimum effect. The statistic is taken on the log launch
// medians as z-scores, after each launch more than 3 noise from its local level (the running
// median of 9 launches) is set to that level: an outlier launch has no weight, and a step keeps
// its full size and its place (a running median moves no edge); the split is where the cleaned
// values split best. The effect is the ratio of the medians. A permutation test is exact for
// exchangeable launches whatever their distribution: spikes, heavy tails and two modes do not
// raise its false-alarm rate, which a t-test's would (Perfherder's complaint). Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringscale::analysis::history {

struct change_options {
    double alpha = 0.01;         ///< significance level of each split's permutation test
    std::size_t min_segment = 3; ///< launches on each side of a change, at least
    double min_effect = 0.02;    ///< |median after / median before - 1| below this is no change
    std::size_t permutations = 999;
    std::uint64_t seed = 1;
};

/// One change: the series moves at launch `index` (the first launch of the new level).
struct change_point {
    std::size_t index = 0;
    double p = 1; ///< permutation p-value of the split when it was found
};

/// The energy statistic Q(tau) (exponent 2) of every split of `y` (tau = 1..n-1 in element
/// tau-1; only tau with min_segment <= tau <= n - min_segment are meaningful). O(n).
std::vector<double> energy_statistics(const std::vector<double>& y);

/// The change points of the series `x` (positive values, e.g. launch medians in seconds), in
/// ascending index. A split is kept when its permutation p <= alpha and its median ratio
/// moves by at least min_effect; each side is then searched again.
std::vector<change_point> find_change_points(const std::vector<double>& x,
                                             const change_options& opt);

/// Launch-to-launch noise of `x` as a log standard deviation (about the CV), robust to steps
/// and spikes: 1.4826 x median |successive log differences| / sqrt(2). NaN below 3 values.
double launch_noise(const std::vector<double>& x);

/// The smallest step (a fraction, 0.05 = 5%) a series of `n` launches with log noise `sigma`
/// detects with 90% power at level alpha, for a step at its middle: a two-sided z-test of
/// the two halves at alpha divided by the candidate splits (Bonferroni, so conservative),
/// and never below min_effect. NaN when n < 2 x min_segment or sigma is not known.
double min_detectable_step(std::size_t n, double sigma, const change_options& opt);

} // namespace ringscale::analysis::history
