// The report's History section: the change points found in the launches' history,
// a trend plot per series for the series that changed most recently (each launch's median,
// each segment's median with its 95% CI as a band, the change points marked with their
// change), and every series, launch by launch, in history_series.csv.
#pragma once

#include "analysis/history/series.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// The section's Markdown; history_series.csv and, with `plots`, one trend plot per series
/// that changed (at most `max_plots`, the most recent change first) written into `dir`, the
/// PNG names added to `pngs`.
std::string history_section(const history::series_set& set, std::size_t max_plots,
                            const std::string& dir, bool plots, std::vector<std::string>& pngs);

} // namespace ringscale::analysis
