// Link calibration (calibrate.hpp's "links"): alpha and beta per level and per collective,
// the links a node's ranks share, and the congestion of shared flows (links.hpp).
#pragma once

#include "calibrate.hpp"

namespace ringscale::analysis::predict {

/// Add a collectives case to set.links (P >= 2, a known op, bytes and timings).
void add_link(const pooled_case& c, calibration_set& set);

/// cal's links, per_op, node_links and congestion from one statistic per link observation
/// (`ly`; NaN leaves one out).
void fit_links(const calibration_set& set, const std::vector<double>& ly, calibration& cal);

} // namespace ringscale::analysis::predict
