// report.html: one self-contained page written from the report's model (the same one
// report.md is written from): the summary first, then the report's sections in order, each
// with a stable anchor; tables sortable and filterable; every plot an inline SVG drawn by
// gnuplot; the history's trends and regressions for every series. Nothing is fetched: a
// Content-Security-Policy forbids every load, and allows only the page's own script (by a
// nonce), so no script a results file could have written runs.
#pragma once

#include "report_model.hpp"

#include <string>

namespace ringscale::analysis {

/// The page's HTML. `dir` holds the report's plot scripts (run again with the svg terminal;
/// the SVGs inlined and removed); `plots` false: no gnuplot, the page says so.
std::string html_page(const report_model& m, const std::string& dir, bool plots);

} // namespace ringscale::analysis
