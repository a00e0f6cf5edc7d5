#include "html_history.hpp"

#include "html_escape.hpp"
#include "html_svg.hpp"
#include "html_tables.hpp"
#include "plots.hpp"

#include "analysis/history/records.hpp"
#include "analysis/statistics/decision.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace ringscale::analysis {

namespace {

std::string seconds_text(double s) {
    return std::isfinite(s) ? format_seconds(s) : std::string("-");
}

std::string ms(double s) {
    return std::isfinite(s) ? fmt::format("{:.6g}", s * 1e3) : std::string("?");
}

/// What changed in the launch's /meta from the launch before it (dates and ids aside).
std::string what_moved(const history::launch_record& before, const history::launch_record& at) {
    std::vector<std::string> moved;
    for (const auto& [k, v] : at.meta) {
        if (k.find("date") != std::string::npos || k.find("time") != std::string::npos ||
            k.find("created") != std::string::npos || k.find("launch") != std::string::npos ||
            k.find("id") == k.size() - 2)
            continue;
        const auto b = before.meta.find(k);
        const std::string old = b == before.meta.end() ? "(none)" : b->second;
        if (old != v)
            moved.push_back(fmt::format("{}: {} -> {}", k, old, v));
    }
    if (before.git_commit != at.git_commit)
        moved.push_back(fmt::format("ringscale {} -> {}", before.git_commit, at.git_commit));
    if (moved.empty())
        return "nothing recorded";
    std::string out;
    for (std::size_t i = 0; i < moved.size() && i < 4; ++i)
        out += (i ? "; " : "") + moved[i];
    return moved.size() > 4 ? out + fmt::format("; {} more", moved.size() - 4) : out;
}

/// "P=2 seq_len=1000: " from a series label (the tokens that name a point's case), or "".
std::string point_identity(const std::string& label) {
    std::string out;
    std::size_t at = 0;
    while (at < label.size()) {
        auto end = label.find(' ', at);
        if (end == std::string::npos)
            end = label.size();
        const std::string tok = label.substr(at, end - at);
        if (tok.rfind("P=", 0) == 0 || tok.rfind("seq_len=", 0) == 0)
            out += tok + " ";
        at = end + 1;
    }
    return out.empty() ? out : out.substr(0, out.size() - 1) + ": ";
}

/// The hover text of point i.
std::string hover_of(const history::series& s, std::size_t i, const estimate& seg) {
    const history::series_point& p = s.points[i];
    // The case is the chart's (its label heads it); P and S name the point.
    std::string t = fmt::format("{}launch #{} of {}, {}\nmedian {} ({} iterations); segment "
                                "{} [{}, {}]",
                                point_identity(s.label), i + 1, s.points.size(),
                                history::format_utc(p.launch->time_s), seconds_text(p.c->step_s),
                                p.c->iterations, seconds_text(seg.value), seconds_text(seg.lo),
                                seconds_text(seg.hi));
    const std::string labels = history::labels_text(*p.launch);
    t += "\nlabels: " + (labels.empty() ? std::string("none") : labels);
    t += "; git commit: " + (p.launch->git_commit.empty() ? "-" : p.launch->git_commit);
    if (!p.c->machine.empty())
        t += "\nmarked: " + p.c->machine;
    return t;
}

/// The gnuplot script of one series' chart into STEM.svg (its data in STEM.dat).
std::string chart_script(const history::series& s, const std::string& dir, const std::string& stem,
                         hover_texts& hover) {
    std::string clean, marked;
    for (const history::series_segment& g : history::segments_of(s)) {
        const estimate& seg = g.median;
        bool first = true; // the segment's first clean launch
        for (std::size_t i = g.begin; i < g.end; ++i) {
            const history::series_point& p = s.points[i];
            const std::string key = fmt::format("h{}", i);
            hover[key] = hover_of(s, i, seg);
            const std::string row =
                fmt::format("{} {} {} {} {} {}\n", p.launch->time_s, ms(p.c->step_s), ms(seg.value),
                            ms(seg.lo), ms(seg.hi), key);
            if (!p.c->machine.empty()) {
                marked += row;
                continue;
            }
            // One blank line at a change: the band and the line break there (two would start
            // gnuplot's next index, the marked launches', so a segment without a clean
            // launch adds none).
            if (first && !clean.empty())
                clean += "\n";
            first = false;
            clean += row;
        }
    }
    write_plot_file(dir + "/" + stem + ".dat", clean + "\n\n" + marked);
    std::string gp = "reset\n" + svg_terminal(900, 320) +
                     fmt::format("set output '{}.svg'\nset grid\nset key outside below\n"
                                 "set datafile missing '?'\nset xdata time\nset timefmt '%s'\n"
                                 "set format x \"%m-%d\\n%H:%M\"\nset offsets graph 0.02, graph "
                                 "0.02, graph 0.1, graph 0.05\nset ylabel 'step (ms)'\n",
                                 stem);
    for (const history::found_change& c : s.changes) {
        if (c.index == 0 || c.index >= s.points.size())
            continue;
        const double x = 0.5 * static_cast<double>(s.points[c.index - 1].launch->time_s +
                                                   s.points[c.index].launch->time_s);
        gp +=
            fmt::format("set arrow from {0:.0f},graph 0 to {0:.0f},graph 1 nohead dt 2 lw 2 "
                        "lc rgb '#c03030'\nset label {1} at {0:.0f},graph 0.95 left offset "
                        "0.5,0 tc rgb '#c03030' front noenhanced\n",
                        x, gnuplot_string(fmt::format("{:+.1f}% ({})", c.change() * 100, c.moved)));
    }
    const std::string dat = "'" + stem + ".dat'";
    gp += fmt::format("plot {0} index 0 using 1:4:5 with filledcurves fc rgb '#c8dcf0' fs solid "
                      "0.6 title '95% CI of the segment median', {0} index 0 using 1:3 with lines "
                      "lw 2 lc rgb '#2060a0' title 'segment median (steps at change points)', "
                      "{0} index 0 using 1:2:6 with labels hypertext point pt 7 ps 0.6 lc rgb "
                      "'#404040' title 'launch median (hover for the launch)'",
                      dat);
    if (!marked.empty())
        gp += fmt::format(", {} index 1 using 1:2:6 with labels hypertext point pt 6 ps 0.9 lc "
                          "rgb '#d07000' title 'marked launch: busy machine, never decides a "
                          "change'",
                          dat);
    return gp + "\nunset output\n";
}

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

} // namespace

namespace {

/// The regressions table: every change point, the most recent first.
std::string regressions_table(const history::series_set& set) {
    struct at {
        const history::series* s;
        const history::found_change* c;
    };
    std::vector<at> all;
    for (const history::series& s : set.all)
        for (const history::found_change& c : s.changes)
            if (c.index > 0 && c.index < s.points.size())
                all.push_back({&s, &c});
    std::stable_sort(all.begin(), all.end(), [](const at& a, const at& b) {
        return a.s->points[a.c->index].launch->time_s > b.s->points[b.c->index].launch->time_s;
    });
    std::vector<html_row> rows;
    for (const at& x : all) {
        const history::series& s = *x.s;
        const history::found_change& c = *x.c;
        const history::launch_record& l = *s.points[c.index].launch;
        html_row r;
        r.id = "row-" + change_anchor(s, c);
        r.tokens = identity_tokens(s.label, s.env);
        r.changed = true;
        r.history = true;
        r.cells = {
            {"<a href=\"#" + series_anchor(s) + "\">" + html_text(s.label) + "</a>"},
            {html_text(s.env)},
            {"<a href=\"#" + change_anchor(s, c) + "\">" +
                 html_text(fmt::format("#{} of {}", c.index + 1, s.points.size())) + "</a>",
             static_cast<double>(c.index + 1)},
            {html_text(history::format_utc(l.time_s)), static_cast<double>(l.time_s)},
            {html_text(seconds_text(c.before.value)), c.before.value},
            {html_text(seconds_text(c.after.value)), c.after.value},
            {html_text(fmt::format("{:+.1f}% {}", 100 * c.change(),
                                   c.change() > 0 ? "slower" : "faster")),
             100 * c.change()},
            {html_text(c.moved)},
            {html_text(c.with.empty() ? what_moved(*s.points[c.index - 1].launch, l) : c.with)},
            {html_text(c.verdict_line())},
            {html_text(fmt::format("{:.3f}", c.p)), c.p}};
        rows.push_back(std::move(r));
    }
    if (rows.empty())
        return "<p>No series changed.</p>\n";
    return html_table({"series", "environment", "launch", "date (UTC)", "before", "after", "change",
                       "phase", "what moved with it", "verdict", "p"},
                      rows, "regressions");
}

/// One series: its summary line (noise, smallest detectable change, changes) and its chart.
std::string series_html(const history::series& s, const std::string& svg, bool plots) {
    const bool changed = !s.changes.empty();
    std::string h = fmt::format(
        "<details class=\"series\" id=\"{}\" data-history=\"1\" data-f=\"{}\"{}{}><summary><span "
        "class=\"lbl\">{}"
        "</span> <span class=\"env\">{}</span> <span class=\"facts\">{} launch(es); noise "
        "{:.1f}%; smallest change detected with 90% power {:.1f}%; {}</span></summary>\n",
        series_anchor(s), html_text(identity_tokens(s.label, s.env)),
        changed ? " data-changed=\"1\"" : "", changed ? " open" : "", html_text(s.label),
        html_text(s.env), s.points.size(), 100 * s.noise, 100 * s.detectable,
        html_text(changed ? fmt::format("{} change point(s), last {:+.1f}%", s.changes.size(),
                                        100 * s.changes.back().change())
                          : std::string("no change point")));
    if (s.marked + s.skipped > 0)
        h += "<p class=\"note\">" +
             html_text(fmt::format("{} launch(es) measured on a marked machine ({} drawn hollow, "
                                   "{} left out); the first: {}",
                                   s.marked + s.skipped, s.marked, s.skipped, s.first_mark)) +
             "</p>\n";
    for (const history::found_change& c : s.changes)
        if (c.index > 0 && c.index < s.points.size())
            h += "<p class=\"change\" id=\"" + change_anchor(s, c) + "\">" +
                 html_text(fmt::format(
                     "Change at launch #{} ({}): {} -> {} ({:+.1f}%), {} moved, p = {:.3f}",
                     c.index + 1, history::format_utc(s.points[c.index].launch->time_s),
                     seconds_text(c.before.value), seconds_text(c.after.value), 100 * c.change(),
                     c.moved, c.p)) +
                 " <a href=\"#row-" + change_anchor(s, c) + "\">(in the table)</a></p>\n";
    if (!svg.empty())
        // Drawn when scrolled to (the page's script): hundreds of charts open in seconds.
        h += "<div class=\"plot lazy\"><template>" + svg + "</template></div>\n";
    else if (plots)
        h += "<p class=\"note\">The chart could not be drawn (gnuplot failed).</p>\n";
    return h + "</details>\n";
}

} // namespace

std::string series_anchor(const history::series& s) {
    return html_anchor("series", s.key);
}

std::string compared_series_html(const history::series_set* set, const std::string& case_key) {
    if (!set)
        return html_text("no series on this page (no --history)");
    std::vector<const history::series*> found; // a series' key: the case key, '\n', its env
    for (const history::series& s : set->all)
        if (s.key.size() > case_key.size() && s.key.compare(0, case_key.size(), case_key) == 0 &&
            s.key[case_key.size()] == '\n')
            found.push_back(&s);
    if (found.empty())
        return html_text("no series on this page (not in the history)");
    std::string h;
    for (const history::series* s : found)
        h += (h.empty() ? "" : "; ") +
             fmt::format("<a href=\"#{}\">{}</a>", series_anchor(*s),
                         html_text(fmt::format("trend, {} launch(es){}", s->points.size(),
                                               found.size() > 1 ? " on " + s->env : "")));
    return h;
}

std::string change_anchor(const history::series& s, const history::found_change& c) {
    const std::string launch = c.index < s.points.size() ? s.points[c.index].launch->launch : "";
    return html_anchor("change", s.key + "\n" + launch);
}

std::string history_html(const history::series_set& set, const std::string& dir, bool plots) {
    std::vector<std::string> svgs(set.all.size());
    if (plots) {
        std::vector<hover_texts> hovers(set.all.size());
        std::string gp;
        for (std::size_t i = 0; i < set.all.size(); ++i)
            if (!set.all[i].points.empty())
                gp += chart_script(set.all[i], dir, fmt::format("trend_{:05}", i), hovers[i]);
        write_plot_file(dir + "/trends.svg.gp", gp);
        try {
            run_gnuplot(dir, "trends.svg.gp");
        } catch (const error&) { // each chart gnuplot drew is kept; the others say so
        }
        std::error_code ec;
        for (std::size_t i = 0; i < set.all.size(); ++i) {
            const std::string stem = fmt::format("{}/trend_{:05}", dir, i);
            // Ids prefixed "tN" (unique on the page), not with the series' long anchor: the
            // prefix is in every point's reference to its shape.
            svgs[i] = inline_svg(read_text(stem + ".svg"), fmt::format("t{}", i), hovers[i]);
            std::filesystem::remove(stem + ".svg", ec);
            std::filesystem::remove(stem + ".dat", ec);
        }
        std::filesystem::remove(dir + "/trends.svg.gp", ec);
        std::filesystem::remove(dir + "/trends.svg.gp.log", ec);
    }
    std::string h = "<h3 id=\"regressions\">Regressions and improvements</h3>\n"
                    "<p>Every change point, the most recent first; the launch links to the "
                    "series' chart.</p>\n" +
                    regressions_table(set);
    h += fmt::format("<h3 id=\"trends\">Trends of all {} series</h3>\n<p>Each launch's median "
                     "step (hover a point: P, S, launch, date, median, its segment's median "
                     "[95% CI], labels, commit), each "
                     "segment's median with its 95% CI as a band; a change point is a step "
                     "and a dashed line. Series without a change start collapsed.</p>\n",
                     set.all.size());
    for (std::size_t i = 0; i < set.all.size(); ++i)
        h += series_html(set.all[i], svgs[i], plots);
    return h;
}

} // namespace ringscale::analysis
