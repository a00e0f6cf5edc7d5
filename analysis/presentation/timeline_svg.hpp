// The report's timelines of traced iterations (launched with --trace): for each scheme at the
// study's largest P, its median iteration as an inline SVG, a lane per rank (at most 16, the
// rank that set the iteration's length first, then the rest of its critical path), compute on
// the upper half of a lane and communication on the lower in two colours, waits hatched, each
// event's args in a <title> a browser shows on hover. Every text from a file is escaped.
#pragma once

#include "analysis/measures/overlap.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// The most lanes (ranks) a timeline draws.
inline constexpr std::size_t timeline_max_lanes = 16;

/// One traced case per scheme (job/variant) at the largest P any traced case ran at, in file
/// order. Pure.
std::vector<const case_data*> timeline_cases(const std::vector<case_data>& cases);

/// The lanes' ranks in drawing order: the critical path's ranks from what set the length
/// back to the last rank, then the others by rank; at most timeline_max_lanes. Pure.
std::vector<int> lane_order(const overlap_summary& s, int world);

/// The report's Markdown for the traced cases: per scheme the worst step and the critical
/// path of its median iteration; "" when no case has a trace.
std::string timeline_section(const std::vector<case_data>& cases);

/// The inline SVG figures of timeline_cases(cases) (ids prefixed "tl<i>-"); "" when none.
std::string timeline_html(const std::vector<case_data>& cases);

/// One iteration's SVG (`id`: a prefix made of [a-z0-9-] only). Pure.
std::string timeline_svg(const traced_iteration& it, const std::string& label,
                         const std::string& id);

} // namespace ringscale::analysis
