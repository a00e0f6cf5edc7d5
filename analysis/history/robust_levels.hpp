// Medians of a series' launches that the change-point search and its benchmark baselines
// share (analysis/history/change_points.cpp): a segment's median, the running median and
// issue 37's cleaned values (kept as a benchmark baseline only); the capped deviations' prefix
// medians are analysis/history/capped_deviations' sweep (issue 50). Pure.
#pragma once

#include <cstddef>
#include <vector>

namespace ringscale::analysis::history {

/// The median of x[a, b) (a < b <= x.size()).
double median_of(const std::vector<double>& x, std::size_t a, std::size_t b);

/// The median of the launches within `half` of each launch of y (fewer at the ends).
std::vector<double> running_median(const std::vector<double>& y, std::size_t half);

/// Issue 37's values (a baseline of the benchmark only): log values as z-scores, a launch
/// more than 3 noise from the running median of the 9 launches around it set to that median
/// unless it is one of a run of m on one side. Issue 49: on a bimodal baseline this rule
/// turned clean baseline launches into new-level ones and moved or lost steps.
std::vector<double> cleaned(std::vector<double> y, std::size_t m);

} // namespace ringscale::analysis::history
