// The report's "Accuracy against fp64" section: the tables of `ringscale-stats accuracy`
// (analysis/comparisons/accuracy.hpp) and, with gnuplot, the worst error of each series against
// P and against S, one panel per dtype.
#pragma once

#include "analysis/comparisons/accuracy.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// Markdown of the section (empty when no case recorded its accuracy). With `plots`, draws
/// DIR/accuracy_p.png and DIR/accuracy_s.png where there are series, adding their names to
/// `pngs`.
std::string accuracy_section(const accuracy_result& r, const std::string& dir, bool plots,
                             std::vector<std::string>& pngs);

} // namespace ringscale::analysis
