#include "accuracy_report.hpp"

#include "plot_panels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace ringscale::analysis {

namespace {

/// The words (" key=value") every label of a panel's lines shares, taken out of them
/// (strip_params): the legend names what tells the lines apart (its dtype and shape are the
/// panel's).
void strip_shared_words(std::vector<panel_series>& lines) {
    if (lines.size() < 2)
        return;
    std::istringstream first(lines.front().name);
    std::string word;
    first >> word; // job/variant: never shared away
    param_list shared;
    while (first >> word) {
        const std::string token = " " + word + " "; // whole words only
        const auto eq = word.find('=');
        if (eq != std::string::npos &&
            std::all_of(lines.begin(), lines.end(), [&](const panel_series& l) {
                return (l.name + " ").find(token) != std::string::npos;
            }))
            shared.emplace_back(word.substr(0, eq), word.substr(eq + 1));
    }
    for (panel_series& l : lines)
        l.name = strip_params(l.name, shared);
}

/// One panel per dtype, one line per series: its cases' worst max_rel against the axis.
bool plot_series(const accuracy_result& r, bool over_p, const std::string& dir,
                 const std::string& stem) {
    std::map<std::string, plot_panel> by_dtype;
    for (const accuracy_series& s : over_p ? r.over_p : r.over_s) {
        const std::string& dtype = s.points.front()->dtype;
        auto it = by_dtype.find(dtype);
        if (it == by_dtype.end()) {
            it = by_dtype
                     .emplace(dtype, make_panel(dtype, over_p ? "P (ranks)" : "S (tokens)",
                                                "worst max relative error against fp64"))
                     .first;
            it->second.x_sizes = !over_p;
            it->second.legend_below = true;
        }
        panel_series line{strip_params(s.label, r.common), {}};
        for (const accuracy_case* c : s.points) // an overflow (inf) is in the table, not drawn
            line.points.push_back({over_p ? static_cast<double>(c->p) : c->seq_len,
                                   std::isfinite(c->worst()) ? c->worst() : NAN, NAN, NAN});
        it->second.series.push_back(std::move(line));
    }
    std::vector<plot_panel> panels;
    for (auto& [dtype, panel] : by_dtype) {
        strip_shared_words(panel.series);
        for (panel_series& l : panel.series) // a legend entry for every line, never a blank one
            if (l.name.find_first_not_of(' ') == std::string::npos)
                l.name = dtype;
        panels.push_back(std::move(panel));
    }
    return draw_panels(panels,
                       over_p ? "error against fp64 as P grows" : "error against fp64 as S grows",
                       dir, stem);
}

} // namespace

std::string accuracy_section(const accuracy_result& r, const std::string& dir, bool plots,
                             std::vector<std::string>& pngs) {
    if (r.cases.empty())
        return {};
    std::string md =
        "\n## Accuracy against fp64\n\nEach attention case that measured its accuracy "
        "(ringscale --accuracy): the normwise max relative error (max |got - fp64| over max "
        "|fp64|) of O, LSE, dQ, dK and dV on seeded sampled rows, the single-rank computation "
        "of the same rows beside it ('single'; 'added' = worst / single: what distribution "
        "adds), and the growth per doubling of P and of S (least squares in log-log). " +
        r.tolerance.describe() + ".\n\n";
    md += render(accuracy_case_table(r), output_format::md);
    for (const auto& [axis, series] : {std::pair{"P", &r.over_p}, {"S", &r.over_s}}) {
        if (series->empty())
            continue;
        md += "\n" + render(accuracy_growth_table(r, axis), output_format::md);
        const std::string stem = std::string("accuracy_") + (axis[0] == 'P' ? "p" : "s");
        if (plots && plot_series(r, axis[0] == 'P', dir, stem)) {
            pngs.push_back(stem + ".png");
            md += fmt::format("\n![error against {}]({}.png)\n", axis, stem);
        }
    }
    md += fmt::format("\n{} of {} cases flagged.\n", r.flagged, r.cases.size());
    return md;
}

} // namespace ringscale::analysis
