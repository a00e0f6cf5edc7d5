#include "question_plots.hpp"

#include "analysis/measures/resources.hpp"
#include "plot_panels.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/text_escape.hpp"
#include "views.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace ringscale::analysis {

namespace {

constexpr double mib = 1024.0 * 1024.0;

/// Summary row of each pooled case.
using row_index = std::map<const pooled_case*, const case_summary*>;

/// The median time in ms with its CI (no bar where the CI is unknown).
panel_point time_point(double x, const case_summary& s) {
    return about_case({x, s.median.value * 1e3, s.median.lo * 1e3, s.median.hi * 1e3}, *s.source);
}

panel_series& series_named(plot_panel& p, const std::string& name) {
    for (panel_series& s : p.series)
        if (s.name == name)
            return s;
    p.series.push_back({name, {}});
    return p.series.back();
}

void sort_points(std::vector<plot_panel>& panels) {
    for (plot_panel& p : panels)
        for (panel_series& s : p.series)
            std::sort(s.points.begin(), s.points.end(),
                      [](const panel_point& a, const panel_point& b) { return a.x < b.x; });
}

std::string image(const std::string& stem, std::vector<std::string>& pngs) {
    pngs.push_back(stem + ".png");
    return fmt::format("\n![{0}]({0}.png)\n", stem);
}

/// One crossing as the marker's text: the schemes, where, the ratio CIs and the verdict.
std::string crossing_text(const crossover_point& c) {
    return fmt::format("{} | {} at S~{}: ratio CI [{:.2f},{:.2f}] / [{:.2f},{:.2f}], {}",
                       c.faster_below, c.faster_above, size_text(c.boundary), c.ratio_below_lo,
                       c.ratio_below_hi, c.ratio_above_lo, c.ratio_above_hi,
                       c.confirmed ? "confirmed" : c.verdict);
}

/// A shape's parameters, those that tell it from the study's other shapes first (pass=fwd
/// vs pass=fwd+bwd), the shared ones after them in parentheses.
std::string distinct_first(const std::string& shape, const std::vector<std::string>& shapes) {
    std::vector<std::string> own, shared;
    std::size_t at = 0;
    while (at < shape.size()) {
        const std::size_t end = std::min(shape.find(' ', at), shape.size());
        const std::string word = shape.substr(at, end - at);
        const bool everywhere = std::all_of(shapes.begin(), shapes.end(), [&](const auto& o) {
            return (" " + o + " ").find(" " + word + " ") != std::string::npos;
        });
        if (!word.empty())
            (everywhere ? shared : own).push_back(word);
        at = end + 1;
    }
    if (own.empty() || shared.empty())
        return shape;
    return fmt::format("{} ({})", fmt::join(own, " "), fmt::join(shared, " "));
}

std::string attention_plots(const question_inputs& in, const row_index& rows,
                            const std::string& dir, std::vector<std::string>& pngs) {
    const std::vector<crossover_cell> cells = scheme_cells(*in.pooled);
    std::vector<std::string> shapes; // in order of first appearance
    for (const crossover_cell& c : cells)
        if (std::find(shapes.begin(), shapes.end(), c.shape) == shapes.end())
            shapes.push_back(c.shape);
    const std::string time_label = "median step time (ms), 95% CI";
    std::string md;
    int n = 0;
    for (const std::string& shape : shapes) {
        std::map<double, plot_panel> by_s, mem_by_s; // S -> panel against P
        std::map<int, plot_panel> by_p;              // P -> panel against S
        for (const crossover_cell& c : cells) {
            if (c.shape != shape)
                continue;
            const std::string s_title = "S = " + size_text(c.seq_len);
            plot_panel& ps =
                by_s.try_emplace(c.seq_len, make_panel(s_title, "P (ranks)", time_label))
                    .first->second;
            plot_panel& pm = mem_by_s
                                 .try_emplace(c.seq_len, make_panel(s_title, "P (ranks)",
                                                                    "peak memory per rank (MiB)"))
                                 .first->second;
            pm.y_from_zero = true;
            plot_panel& pp =
                by_p.try_emplace(c.world_size,
                                 make_panel("", "sequence length S (tokens)", time_label))
                    .first->second;
            pp.title = c.same_work
                           ? fmt::format("P = {} (identical work: not ranked)", c.world_size)
                           : fmt::format("P = {}", c.world_size);
            pp.x_sizes = true;
            for (const scheme_point& s : c.schemes) {
                const case_summary& row = *rows.at(s.source);
                series_named(ps, s.scheme).points.push_back(time_point(c.world_size, row));
                series_named(pp, s.scheme).points.push_back(time_point(c.seq_len, row));
                if (s.peak_bytes > 0)
                    series_named(pm, s.scheme)
                        .points.push_back(about_case(
                            {double(c.world_size), s.peak_bytes / mib, NAN, NAN}, *s.source));
            }
        }
        // Confirmed crossings are marked and labelled; the others are counted in the title
        // (noise may have drawn them; the Crossovers table lists them).
        for (auto& [world, p] : by_p) {
            std::size_t unconfirmed = 0;
            if (in.crossover)
                for (const crossover_point& c : in.crossover->crossings)
                    if (c.shape == shape && c.world_size == world) {
                        if (c.confirmed)
                            p.markers.push_back({c.boundary, crossing_text(c)});
                        else
                            ++unconfirmed;
                    }
            if (unconfirmed > 0)
                p.title += fmt::format(" ({} crossing(s) not decided by the rule: see the "
                                       "Crossovers table)",
                                       unconfirmed);
        }
        ++n;
        const std::string what = "Attention schemes, " + distinct_first(shape, shapes);
        if (by_p.size() < 2)
            md += fmt::format("\nOnly P={0} measured for {1}: no plot against P. Launches at "
                              "other rank counts into the same results add the schemes and "
                              "their memory against P; the Crossovers table gives each "
                              "scheme's memory at P={0}.\n",
                              by_p.begin()->first, markdown_text(shape));
        // One figure per question, where its x axis has two or more values.
        auto figure = [&](bool drawn, auto& panels, const char* kind, const std::string& title,
                          const std::string& lead) {
            std::vector<plot_panel> v;
            for (auto& [k, p] : panels)
                v.push_back(p);
            sort_points(v);
            const std::string stem = fmt::format("{}_{:02}", kind, n);
            if (drawn && draw_panels(v, title + what, dir, stem, 3))
                md += "\n" + lead + " (" + markdown_text(shape) + "):\n" + image(stem, pngs);
        };
        figure(by_p.size() >= 2, by_s, "schemes_vs_p",
               "Which scheme is fastest as P grows? Median step time against P (one panel per "
               "S). ",
               "Which scheme is fastest as P grows, at each S");
        figure(by_s.size() >= 2, by_p, "schemes_vs_s",
               "Where do the schemes trade places along S? Median step time against S (one "
               "panel per P; dashed: confirmed crossings with their ratio CIs). ",
               "Where the schemes trade places along S, at each P");
        figure(by_p.size() >= 2, mem_by_s, "memory_vs_p",
               "Memory per rank against P (the largest rank's peak: device memory on a GPU, else "
               "the job's host buffers). ",
               "What each scheme needs per rank as P grows");
    }
    return md;
}

std::string training_plots(const question_inputs& in, const row_index& rows, const std::string& dir,
                           std::vector<std::string>& pngs) {
    std::map<std::string, std::vector<const pooled_case*>> shapes; // params -> cases
    for (const pooled_case& c : *in.pooled)
        if (c.job == "train_step" && !c.launches.empty()) {
            std::string shape;
            for (const auto& [k, v] : c.params) // the variant's own options name the series
                if (k != "dp_variant" && k != "cp_variant" && k != "prefetch")
                    shape += fmt::format("{}{}={}", shape.empty() ? "" : " ", k, v);
            shapes[shape].push_back(&c);
        }
    std::string md;
    int n = 0;
    for (const auto& [shape, cases] : shapes) {
        std::set<int> ps;
        plot_panel time = make_panel("step time", "P (ranks)", "median step time (ms), 95% CI");
        plot_panel tokens = make_panel("throughput", "P (ranks)", "tokens/s (all ranks)");
        std::vector<plot_panel> memory;
        for (const memory_figure& m : memory_figures())
            if (std::string(m.dataset) != schema::ds_peak_rss_bytes)
                memory.push_back(make_panel(m.title, "P (ranks)", "MiB per rank (max)"));
        for (const pooled_case* c : cases) {
            ps.insert(c->world_size);
            const case_summary& row = *rows.at(c);
            const std::string name =
                c->variant + (c->kept_apart ? " [" + c->resources.front() + "]" : "");
            series_named(time, name).points.push_back(time_point(c->world_size, row));
            if (row.tokens_per_s)
                series_named(tokens, name)
                    .points.push_back(
                        about_case({double(c->world_size), *row.tokens_per_s, NAN, NAN}, *c));
            std::size_t i = 0;
            for (const memory_figure& m : memory_figures()) {
                if (std::string(m.dataset) == schema::ds_peak_rss_bytes)
                    continue;
                if (auto v = peak_memory(*c, m.dataset))
                    series_named(memory[i], name)
                        .points.push_back(
                            about_case({double(c->world_size), *v / mib, NAN, NAN}, *c));
                ++i;
            }
        }
        tokens.y_from_zero = true;
        for (plot_panel& m : memory)
            m.y_from_zero = true; // sizes compare as ratios from zero
        std::vector<plot_panel> speed = {time, tokens};
        sort_points(speed);
        sort_points(memory);
        const std::string stem = fmt::format("train_vs_p_{:02}", ++n);
        if (draw_panels(speed, "DDP, ZeRO-1 and FSDP against P: step time and throughput. " + shape,
                        dir, stem, 2))
            md += fmt::format("\nData-parallel variants against P ({} P measured; {}):\n",
                              ps.size(), markdown_text(shape)) +
                  image(stem, pngs);
        const std::string mstem = fmt::format("train_memory_vs_p_{:02}", n);
        if (draw_panels(memory, "Memory per rank against P by category. " + shape, dir, mstem, 3))
            md += "\nWhere each variant's memory goes, per rank, against P:\n" + image(mstem, pngs);
    }
    return md;
}

} // namespace

std::string busbw_plots(const std::vector<case_summary>& rows, const std::string& dir,
                        std::vector<std::string>& pngs) {
    std::map<std::string, plot_panel> by_op;
    std::size_t withheld = 0;
    for (const case_summary& s : rows) {
        const pooled_case& p = *s.source;
        if (p.job != "collectives" || p.launches.empty())
            continue;
        if (!s.busbw) {
            ++withheld;
            continue;
        }
        const case_data& c = *p.launches.front();
        const double bytes = c.number(schema::attr::bytes).value_or(0);
        const double factor = c.number(schema::attr::busbw_factor).value_or(1.0);
        const std::string op = c.text(schema::attr::op, p.variant);
        plot_panel& panel = by_op[op];
        panel.title = op;
        panel.x_sizes = true;
        panel.xlabel = "message size (bytes)";
        panel.ylabel = "busbw (GB/s), 95% CI";
        const double bw = *s.busbw / 1e9;
        series_named(panel, fmt::format("P={} {}", p.world_size, c.text(schema::attr::device)))
            .points.push_back(about_case(
                {bytes, bw, bytes * factor / s.median.hi / 1e9, bytes * factor / s.median.lo / 1e9},
                p));
    }
    std::vector<plot_panel> panels;
    for (auto& [op, p] : by_op)
        panels.push_back(p);
    sort_points(panels);
    std::string md;
    if (withheld > 0)
        md += fmt::format("\n{} collectives case(s) have no bus bandwidth to draw (not rated: "
                          "a no-op at P=1, or withheld by the sanity gate).\n",
                          withheld);
    if (draw_panels(panels,
                    "Bus bandwidth against message size (nccl-tests busbw convention; CI from "
                    "the median time's CI), one panel per operation",
                    dir, "busbw", 3))
        md += image("busbw", pngs);
    return md;
}

std::string question_plots(const question_inputs& in, const std::string& dir,
                           std::vector<std::string>& pngs) {
    row_index rows;
    for (const case_summary& s : *in.rows)
        rows[s.source] = &s;
    std::string md;
    if (const std::string a = attention_plots(in, rows, dir, pngs); !a.empty())
        md += "\n### Attention schemes\n" + a;
    if (const std::string t = training_plots(in, rows, dir, pngs); !t.empty())
        md += "\n### Training step: data-parallel variants\n" + t;
    return md;
}

} // namespace ringscale::analysis
