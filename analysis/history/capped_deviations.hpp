// The change-point method's statistic (issue 49; analysis/history/change_points.cpp): how much
// a split lowers a segment's capped absolute deviations about each side's median, each launch
// costing min(|r|, cap) + 0.1 |r|. Issue 50: computed for every split in O(n log n) (one sort,
// then each side's costs in one sweep that moves the median and the cap's bounds along the
// sorted values), not O(n^2): detectable_step evaluates it thousands of times a series, and
// the sorted insertion of the prefix medians and the sums over each side were most of a query.
// Pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace ringscale::analysis::history {

/// The cost of y[0, k) about its lower median (sorted[(k - 1) / 2]), each launch costing
/// min(|r|, cap) + 0.1 |r| (cap may be infinite), for k = 1..n in element k - 1. O(n log n).
std::vector<double> prefix_capped_costs(const std::vector<double>& y, double cap);

/// For each split tau = 1..n-1 (element tau - 1), how much splitting y there lowers its cost
/// (prefix_capped_costs) about each side's median; only m <= tau <= n - m are computed (the
/// splits used), the others are 0. O(n log n). With cap = 3 noise, a spike costs about the
/// cap on either side, so it cannot pull the split across a step's launches, each of which
/// costs the cap and more on the wrong side; the 0.1 |r| decides between splits the cap alone
/// cannot (a launch on the upper of two baseline levels just before a large step, which plain
/// absolute deviations place right, a capped loss at random).
std::vector<double> capped_statistics(const std::vector<double>& y, double cap, std::size_t m);

/// As capped_statistics, given y's ascending `order` (the positions of y's values from the
/// smallest; ties in any order): O(n).
std::vector<double> capped_statistics(const std::vector<double>& y,
                                      const std::vector<std::size_t>& order, double cap,
                                      std::size_t m);

/// y's ascending order: the positions of its values from the smallest, ties by position.
std::vector<std::size_t> ascending(const std::vector<double>& y);

/// The values z[i] = r[perm[i]] + (i >= from ? shift : 0) (a permutation of r with a step
/// planted from `from` on) and their ascending order, from r's (`r_order`) in O(n): each side's
/// positions in r's order, merged.
void permuted(const std::vector<double>& r, const std::vector<std::size_t>& r_order,
              const std::vector<std::size_t>& perm, std::size_t from, double shift,
              std::vector<double>& z, std::vector<std::size_t>& order);

/// The cap of the capped deviations: 3 launch-to-launch noises of y in its order (1.4826 x
/// median |successive differences| / sqrt 2, so a step does not widen it); infinite when y
/// does not vary. O(n).
double noise_cap(const std::vector<double>& y);

} // namespace ringscale::analysis::history
