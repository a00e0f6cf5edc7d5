// The report's "Training numerics" section: the verdicts of `ringscale-stats
// numerics` (analysis/comparisons/numerics.hpp, the same functions) and, with gnuplot, two
// figures of one panel per dtype: the loss against the step of each configuration and the
// reference, and the divergence |loss - reference| against the step with the dtype's floor and
// k x floor. A non-finite loss is a result: a gap in its line and a marker "non-finite loss at
// step s (diverged)", never a broken plot.
#pragma once

#include "analysis/comparisons/numerics.hpp"
#include "plot_panels.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// The most lines of configurations drawn in one panel (the first seed of each configuration
/// and P, diverged cases first); the panel's title says how many were left out.
inline constexpr std::size_t numerics_max_lines = 12;
/// The most steps drawn per line: longer series are drawn every n-th step (with every step a
/// verdict or a non-finite loss falls on), which the panel's title says.
inline constexpr std::size_t numerics_max_points = 250;

/// The panels of one figure, one per dtype in name order: `divergence` false, the loss of each
/// drawn case and of its seed's reference against the step; true, |loss - reference| (steps
/// where it is 0 left out: the axis may be logarithmic) with the dtype's floor (the running max
/// over its cases' floor_loss) and k x floor. Non-finite values are NaN (a gap); the first
/// non-finite loss and each verdict's step of a drawn case are markers. Pure.
std::vector<plot_panel> numerics_panels(const numerics_result& r, bool divergence);

/// Markdown of the section (empty when no case recorded numerics). With `plots`, draws
/// DIR/numerics_loss.png and DIR/numerics_divergence.png, adding their names to `pngs`.
std::string numerics_section(const numerics_result& r, const std::string& dir, bool plots,
                             std::vector<std::string>& pngs);

} // namespace ringscale::analysis
