#include "report_summary.hpp"

#include "html_history.hpp"

#include "analysis/history/records.hpp"
#include "src/base/parse.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

/// Lines as a list, at most `max` of them, then how many more the section `more` holds.
std::string capped(const std::vector<std::string>& lines, std::size_t max, const char* more) {
    std::string md;
    for (std::size_t i = 0; i < lines.size() && i < max; ++i)
        md += "- " + lines[i] + "\n";
    if (lines.size() > max)
        md += fmt::format("- ... and {} more: see {}\n", lines.size() - max, more);
    return md;
}

std::string fastest_lines(const crossover_result& r, std::size_t max) {
    std::vector<std::string> lines;
    for (const crossover_cell& c : r.cells) {
        if (c.same_work || c.schemes.size() < 2)
            continue;
        lines.push_back(fmt::format(
            "S={:g} P={} ({}): **{}** fastest, {:+.1f}% [{:+.1f}%, {:+.1f}%] over {}, {}",
            c.seq_len, c.world_size, markdown_text(c.shape), markdown_text(c.schemes[0].scheme),
            100 * c.margin, 100 * c.margin_lo, 100 * c.margin_hi,
            markdown_text(c.schemes[1].scheme), markdown_text(c.verdict)));
    }
    return lines.empty() ? ""
                         : "\nFastest scheme per (S, P):\n\n" + capped(lines, max, "Crossovers");
}

std::string efficiency_lines(const std::vector<scaling_result>& scaling, std::size_t max) {
    std::vector<std::string> lines;
    for (const scaling_result& r : scaling) {
        if (r.points.empty())
            continue;
        const scaling_point& p = *std::max_element(
            r.points.begin(), r.points.end(),
            [](const scaling_point& a, const scaling_point& b) { return a.p < b.p; });
        lines.push_back(fmt::format("{}: {} efficiency {:.2f} [{:.2f}, {:.2f}] at P={} (base "
                                    "P={})",
                                    markdown_text(r.label), markdown_text(r.scaling), p.efficiency,
                                    p.efficiency_lo, p.efficiency_hi, p.p, r.base_p));
    }
    return lines.empty()
               ? ""
               : "\nScaling efficiency at the largest P:\n\n" + capped(lines, max, "Scaling");
}

std::string regression_lines(const history::series_set& set, std::size_t max) {
    std::vector<std::string> lines;
    std::size_t steady = 0;
    for (const history::series& s : set.all) {
        if (!s.regressed()) {
            steady += s.changes.empty();
            continue;
        }
        const history::found_change& c = s.changes.back();
        const std::string date =
            c.index < s.points.size() ? history::format_utc(s.points[c.index].launch->time_s) : "?";
        lines.push_back(
            fmt::format("[{}](report.html#{}) ({}): {:+.1f}% since launch #{} ({}), {} moved, "
                        "p = {:.3f}",
                        markdown_text(s.label), series_anchor(s), markdown_text(s.env),
                        100 * c.change(), c.index + 1, date, markdown_text(c.moved), c.p));
    }
    std::string md = fmt::format("\nHistory: {} series, {} without a change point, {} slower "
                                 "since their last change{}\n",
                                 set.all.size(), steady, lines.size(), lines.empty() ? "." : ":");
    return md + (lines.empty() ? "" : "\n" + capped(lines, max, "History"));
}

std::string marked_lines(const summary_inputs& in, std::size_t max) {
    std::vector<std::string> lines;
    if (in.pooled)
        for (const pooled_case& p : *in.pooled)
            if (const std::string m = marks_text(p, true); !m.empty())
                lines.push_back(fmt::format("{} P={}: {}", markdown_text(p.label()), p.world_size,
                                            markdown_text(m)));
    if (in.history)
        for (const history::series& s : in.history->all)
            if (s.marked + s.skipped > 0)
                lines.push_back(fmt::format("history {}: {} launch(es) marked, first: {}",
                                            markdown_text(s.label), s.marked + s.skipped,
                                            markdown_text(s.first_mark)));
    if (lines.empty())
        return "\nNothing was marked: no case ran on a contended machine or while the sentinel "
               "drifted.\n";
    return "\nMarked (measured on a busy machine; never decides a verdict):\n\n" +
           capped(lines, max, "Machine");
}

} // namespace

std::string summary_section(const summary_inputs& in, std::size_t max_lines) {
    std::string md = "## At a glance\n";
    if (in.crossover)
        md += fastest_lines(*in.crossover, max_lines);
    if (in.scaling)
        md += efficiency_lines(*in.scaling, max_lines);
    if (in.history)
        md += regression_lines(*in.history, max_lines);
    md += marked_lines(in, max_lines);
    return md + "\n";
}

} // namespace ringscale::analysis
