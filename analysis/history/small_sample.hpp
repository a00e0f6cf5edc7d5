// The change test of a short segment, where the permutation test of the capped deviations
// cannot reach alpha: a 3|3 split of 6 launches has 20 orderings, so no permutation p of 6
// launches is below 1/20, and a step 3 launches from either end of n launches has a p of at
// least 2 / C(n, 3). Below small_sample_limit launches a segment is tested instead by the
// largest, over its splits, of |median right - median left| of the log launch medians over a
// robust scale (the upper quartile of the absolute successive differences within each side,
// which a step between the sides does not reach; the upper quartile, not the median, so that
// a baseline on two levels, which jumps between launches, counts its jumps) x sqrt(1/a +
// 1/b). Its null is drawn once per size
// (20,000 Gaussian segments, seeded: the statistic does not depend on the level or the
// scale), so any alpha down to 1/20,001 can be reached. The measured A/A rates of both tests
// are tests/bench/history_rates' small-series table. Pure, but for the null's cache.
#pragma once

#include <cstddef>
#include <vector>

namespace ringscale::analysis::history {

/// The smallest permutation p of a split at tau of n distinct launches: 2 / C(n, tau) (the
/// ideal ordering and its mirror image).
double permutation_floor(std::size_t n, std::size_t tau);

/// The smallest number of launches at which the permutation test can reject at `alpha` a step
/// at any split leaving m on each side: 2 / C(n, m) <= alpha (an ideal step and every
/// permutation drawn; with 999 drawn it is a coin toss there).
std::size_t permutation_reach(double alpha, std::size_t m);

/// Segments shorter than this are tested by the small-sample test: where 2 / C(n, m) exceeds
/// alpha / 5, so that 999 drawn permutations of an ideal step at the edge reject it.
std::size_t small_sample_limit(double alpha, std::size_t m);

/// The smallest number of launches at which the small-sample test can reject at `alpha`:
/// 2 x m when its 20,000 null draws resolve alpha (alpha >= 1/20,001), else none (0).
std::size_t small_sample_reach(double alpha, std::size_t m);

/// The smallest number of launches a series needs before any change in it can be found at
/// `alpha`: small_sample_reach, or the permutation test's reach where the small-sample test
/// cannot resolve alpha.
std::size_t smallest_launches(double alpha, std::size_t m);

/// A split of a segment: the first launch of its right side and its statistic.
struct small_split {
    std::size_t tau = 0;
    double t = 0;
};

/// The best split of the log launch medians `y` among those leaving m on each side (tau 0
/// when y is shorter than 2 m).
small_split small_best(const std::vector<double>& y, std::size_t m);

/// The p of the statistic `t` of a segment of n launches (m on each side at least):
/// (null draws >= t + 1) / 20,001.
double small_p(double t, std::size_t n, std::size_t m);

} // namespace ringscale::analysis::history
