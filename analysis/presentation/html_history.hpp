// report.html's History: a trend chart for every series (each launch's median, each
// segment's median with its 95% CI as a band, change points as steps and dashed lines, marked
// launches hollow and apart, dates on the axis, a hover text per launch), the regressions
// table (series, launch, date, before, after, change, phase, what moved, p) linked to the
// charts, and each series' noise and smallest detectable change. Unchanged series start
// collapsed.
#pragma once

#include "analysis/history/series.hpp"

#include <string>

namespace ringscale::analysis {

/// The History part of the page as HTML (every results-file string escaped). The charts are
/// drawn by one gnuplot run in `dir` (data and scripts removed afterwards); without gnuplot
/// (`plots` false) the page says so and keeps the tables.
std::string history_html(const history::series_set& set, const std::string& dir, bool plots);

/// The anchor of a series on the page ("series-" and a hash of its key).
std::string series_anchor(const history::series& s);

/// The cell of a compared case (its case key) in compare's table on the page: a link to its
/// series' chart, one per environment the history holds the case on; where the page has no
/// series of it (no history given, or the case is not in it), text that says so.
std::string compared_series_html(const history::series_set* set, const std::string& case_key);

/// The anchor of a change point ("change-" and a hash of its series and launch).
std::string change_anchor(const history::series& s, const history::found_change& c);

} // namespace ringscale::analysis
