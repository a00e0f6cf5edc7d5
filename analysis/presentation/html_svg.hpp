// Plots for report.html: gnuplot's own SVG, made safe to inline. The report's PNG
// scripts are re-run with the svg terminal; the history charts are drawn to SVG directly. The
// SVG keeps no script and no event attribute (gnuplot's hypertext handlers put their text in
// a JavaScript string inside an attribute, where a quote in a label would end it): each
// hypertext point becomes a <title> with the page's own escaped text, which a browser shows on
// hover; every id is prefixed so several plots share one page.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// Hover text by hypertext key: a plot labels each point with a key ("h17"), never with text
/// from a results file, and the page puts the escaped text in the point's <title>.
using hover_texts = std::map<std::string, std::string>;

/// The gnuplot terminal line of an inline SVG of `width` x `height` pixels.
std::string svg_terminal(int width, int height);

/// `svg` (gnuplot's output) as an element to inline: from <svg to </svg>, scripts and on*
/// attributes removed, hypertext points given their <title> from `hover`, ids prefixed with
/// `prefix`, each plot group whose title starts with "marked" given class="marked", and
/// gnuplot's most frequent group style shortened to class="w" (the page's CSS).
std::string inline_svg(const std::string& svg, const std::string& prefix,
                       const hover_texts& hover = {});

/// SVGs of the report's PNG plots in `dir`, by PNG stem: every *.gp script there is run again
/// with the svg terminal; the SVGs and their scripts are removed from `dir` afterwards.
/// Plots whose script fails are left out (the page says the plot is missing).
std::map<std::string, std::string> report_svgs(const std::string& dir);

} // namespace ringscale::analysis
