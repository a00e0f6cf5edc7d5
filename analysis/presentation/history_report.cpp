#include "history_report.hpp"

#include "plot_panels.hpp"
#include "plots.hpp"
#include "table.hpp"

#include "analysis/history/records.hpp"
#include "analysis/history/tables.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

/// A number for a CSV or data file; "" (CSV) or `missing` when it is not finite.
std::string number(double v, const char* missing = "") {
    return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string(missing);
}

const history::found_change* change_at(const history::series& s, std::size_t i) {
    for (const history::found_change& c : s.changes)
        if (c.index == i)
            return &c;
    return nullptr;
}

/// The series with a change point, the most recent change first (then the largest).
std::vector<const history::series*> changed_first(const history::series_set& set) {
    std::vector<const history::series*> out;
    for (const history::series& s : set.all)
        if (!s.changes.empty() && !s.points.empty())
            out.push_back(&s);
    auto last_change_time = [](const history::series* s) {
        const std::size_t i = std::min(s->changes.back().index, s->points.size() - 1);
        return s->points[i].launch->time_s;
    };
    std::stable_sort(out.begin(), out.end(), [&](auto* a, auto* b) {
        if (last_change_time(a) != last_change_time(b))
            return last_change_time(a) > last_change_time(b);
        return std::abs(a->changes.back().change()) > std::abs(b->changes.back().change());
    });
    return out;
}

/// STEM.png: each launch's median, each segment's median and 95% CI band, the changes marked.
void plot_trend(const history::series& s, const std::string& dir, const std::string& stem) {
    // Marked launches (kept in the series) are drawn apart, in their own column.
    std::string data =
        "# launch step_ms segment_median_ms segment_lo_ms segment_hi_ms marked_step_ms\n";
    for (const history::series_segment& g : history::segments_of(s)) {
        for (std::size_t i = g.begin; i < g.end; ++i) {
            const bool marked = !s.points[i].c->machine.empty();
            data += fmt::format("{} {} {} {} {} {}\n", i + 1,
                                marked ? "?" : number(s.points[i].c->step_s * 1e3, "?"),
                                number(g.median.value * 1e3, "?"), number(g.median.lo * 1e3, "?"),
                                number(g.median.hi * 1e3, "?"),
                                marked ? number(s.points[i].c->step_s * 1e3, "?") : "?");
        }
        data += "\n"; // a blank line: the band and the median line break between segments
    }
    write_plot_file(dir + "/" + stem + ".dat", data);
    std::string gp = fmt::format(
        "set terminal {} size 1000,440 font 'Sans,10'\nset output {}\nset grid\n"
        "set key outside below\nset datafile missing '?'\nset offsets 0.5,0.5,graph 0.12,graph "
        "0.04\n"
        "set title {} noenhanced\n"
        "set xlabel 'launch (in the series order)'\nset ylabel 'step time (ms), launch median'\n",
        png_terminal(), gnuplot_string(stem + ".png"), gnuplot_wrapped(s.label, 110));
    for (const history::found_change& c : s.changes) {
        const double x = static_cast<double>(c.index) + 0.5; // between the two launches
        gp += fmt::format("set arrow from {0},graph 0 to {0},graph 1 nohead dt 2 lw 2 "
                          "lc rgb '#c03030'\nset label {1} at {0},graph 0.96 left offset 0.5,0 "
                          "tc rgb '#c03030' front noenhanced\n",
                          x,
                          gnuplot_string(fmt::format("{:+.1f}% ({}; {})", c.change() * 100, c.moved,
                                                     c.verdict_line())));
    }
    const std::string dat = gnuplot_string(stem + ".dat");
    gp += fmt::format("plot {0} using 1:4:5 with filledcurves fc rgb '#c8dcf0' fs solid 0.6 "
                      "title '95% CI of the segment median', {0} using 1:3 with lines lw 2 "
                      "lc rgb '#2060a0' title 'segment median', {0} using 1:2 with points pt 7 "
                      "ps 0.5 lc rgb '#404040' title 'launch median'{1}\n",
                      dat,
                      s.marked ? fmt::format(", {} using 1:6 with points pt 6 ps 0.8 lc rgb "
                                             "'#c07000' title 'launch median, marked machine'",
                                             dat)
                               : "");
    write_plot_file(dir + "/" + stem + ".gp", gp);
    run_gnuplot(dir, stem + ".gp");
}

/// history_series.csv's text: one row per launch of every series (its segment's median and
/// CI, and whether a change point starts there).
std::string history_csv(const history::series_set& set) {
    std::string out = "series,environment,launch_number,launch,date_utc,labels,step_s,compute_s,"
                      "comm_s,wait_s,memory_bytes,segment,segment_median_s,segment_lo_s,"
                      "segment_hi_s,change_starts_pct,change_p,change_moved,mark\n";
    for (const history::series& s : set.all) {
        const std::vector<history::series_segment> segments = history::segments_of(s);
        for (std::size_t k = 0; k < segments.size(); ++k)
            for (std::size_t i = segments[k].begin; i < segments[k].end; ++i) {
                const history::series_point& p = s.points[i];
                const history::found_change* c = change_at(s, i);
                out += fmt::format(
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                    csv_field(s.label), csv_field(s.env), i + 1, csv_field(p.launch->launch),
                    csv_field(history::format_utc(p.launch->time_s)),
                    csv_field(history::labels_text(*p.launch)), number(p.c->step_s),
                    number(p.c->compute_s), number(p.c->comm_s), number(p.c->wait_s),
                    number(p.c->memory_bytes), k + 1, number(segments[k].median.value),
                    number(segments[k].median.lo), number(segments[k].median.hi),
                    c ? number(c->change() * 100) : "", c ? number(c->p) : "",
                    c ? csv_field(c->moved) : "", csv_field(history::mark_text_of(p.c->machine)));
            }
    }
    return out;
}

} // namespace

std::string history_section(const history::series_set& set, std::size_t max_plots,
                            const std::string& dir, bool plots, std::vector<std::string>& pngs) {
    std::size_t changes = 0, regressed = 0;
    for (const history::series& s : set.all) {
        changes += s.changes.size();
        regressed += s.regressed();
    }
    write_plot_file(dir + "/history_series.csv", history_csv(set));
    std::string md = fmt::format(
        "\n## History\n\n{} series, {} change point(s), {} now slower than before their last "
        "change. Every series, launch by launch, with its segments' medians and 95% CIs: "
        "[history_series.csv](history_series.csv).\n",
        set.all.size(), changes, regressed);
    for (const std::string& n : set.notes)
        md += "- " + markdown_text(n) + "\n";
    if (changes == 0)
        return md + "\nNo series changed.\n";
    md += "\n" + render(history::change_table(set), output_format::md);
    const std::vector<const history::series*> changed = changed_first(set);
    if (!plots || max_plots == 0)
        return md;
    md += fmt::format("\nTrends of the {} series that changed most recently (of {}; "
                      "--history-plots sets how many): each launch's median step, each "
                      "segment's median with its 95% CI as a band, the change points dashed.\n",
                      std::min(max_plots, changed.size()), changed.size());
    for (std::size_t i = 0; i < changed.size() && i < max_plots; ++i) {
        const std::string stem = fmt::format("history_{:02}", i + 1);
        plot_trend(*changed[i], dir, stem);
        pngs.push_back(stem + ".png");
        md += fmt::format("\n**{}** ({})\n\n![{}]({}.png)\n", markdown_text(changed[i]->label),
                          markdown_text(changed[i]->env), stem, stem);
    }
    return md;
}

} // namespace ringscale::analysis
