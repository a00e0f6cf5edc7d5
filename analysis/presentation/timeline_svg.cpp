#include "analysis/presentation/timeline_svg.hpp"

#include "analysis/cases/cases.hpp"
#include "analysis/presentation/html_escape.hpp"

#include "src/base/text_escape.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace ringscale::analysis {

namespace {

constexpr double width = 900, left = 110, lane_h = 28, top = 24;

std::string hover(const trace::event& e, const std::string& label) {
    std::string t = fmt::format("{}: rank {}", trace::kind_name(e.what), e.rank);
    if (e.what == trace::kind::wait && e.op != trace::kind::wait)
        t += fmt::format(", waited for {}", trace::kind_name(e.op));
    if (e.step >= 0)
        t += fmt::format(", ring step {}", e.step);
    if (e.layer >= 0)
        t += fmt::format(", layer {}", e.layer);
    if (e.peer >= 0)
        t += fmt::format(", {} rank {}", e.what == trace::kind::send ? "to" : "from", e.peer);
    if (e.bytes > 0)
        t += fmt::format(", {:.0f} bytes", e.bytes);
    if (e.flops > 0)
        t += fmt::format(", {:.3g} block FLOPs", e.flops);
    t += fmt::format(", {:.1f} to {:.1f} us; {}", e.start_s * 1e6, e.end_s * 1e6, label);
    return t;
}

} // namespace

std::vector<const case_data*> timeline_cases(const std::vector<case_data>& cases) {
    int largest = 0;
    for (const case_data& c : cases)
        if (!c.trace.empty())
            largest = std::max(largest, c.world_size);
    std::vector<const case_data*> out;
    std::set<std::string> schemes;
    for (const case_data& c : cases)
        if (!c.trace.empty() && c.world_size == largest &&
            schemes.insert(c.job + "/" + c.variant).second)
            out.push_back(&c);
    return out;
}

std::vector<int> lane_order(const overlap_summary& s, int world) {
    std::vector<int> out;
    for (auto it = s.path.rbegin(); it != s.path.rend(); ++it)
        if (std::find(out.begin(), out.end(), it->rank) == out.end())
            out.push_back(it->rank);
    for (int r = 0; r < world; ++r)
        if (std::find(out.begin(), out.end(), r) == out.end())
            out.push_back(r);
    if (out.size() > timeline_max_lanes)
        out.resize(timeline_max_lanes);
    return out;
}

std::string timeline_svg(const traced_iteration& it, const std::string& label,
                         const std::string& id) {
    const overlap_summary s = summarize_overlap(it.events);
    int world = 0;
    for (const trace::event& e : it.events)
        world = std::max(world, e.rank + 1);
    const std::vector<int> lanes = lane_order(s, world);
    const double height = top + lane_h * static_cast<double>(lanes.size()) + 20;
    const double scale = s.length_s > 0 ? (width - left - 10) / s.length_s : 0;
    std::string h = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"{0}\" "
        "height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\"><title>{2}</title>"
        "<defs><pattern id=\"{3}-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fde2e2\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c0392b\" stroke-width=\"3\"/>"
        "</pattern></defs>",
        width, height, html_text(label), id);
    h += fmt::format("<text x=\"{}\" y=\"14\" font-size=\"11\">0</text><text x=\"{}\" y=\"14\" "
                     "font-size=\"11\" text-anchor=\"end\">{:.3f} ms</text>",
                     left, width - 10, s.length_s * 1e3);
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        const int rank = lanes[lane];
        const double y = top + lane_h * static_cast<double>(lane);
        const int host = static_cast<std::size_t>(rank) < it.rank_host.size()
                             ? it.rank_host[static_cast<std::size_t>(rank)]
                             : 0;
        h += fmt::format("<g class=\"lane\" data-rank=\"{}\"><text x=\"4\" y=\"{}\" "
                         "font-size=\"11\">rank {} (host {})</text>",
                         rank, y + 17, rank, host);
        for (const trace::event& e : it.events) {
            if (e.rank != rank)
                continue;
            const bool comm = trace::is_transfer(e.what);
            const std::string fill = e.what == trace::kind::wait ? fmt::format("url(#{}-hatch)", id)
                                     : comm                      ? "#e67e22"
                                                                 : "#2e86c1";
            const double x = left + e.start_s * scale;
            const double w = std::max(0.5, (e.end_s - e.start_s) * scale);
            h += fmt::format("<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
                             "height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
                             e.what == trace::kind::wait ? "wait"
                             : comm                      ? "comm"
                                                         : "compute",
                             x, comm ? y + lane_h / 2 : y + 2, w, lane_h / 2 - 3, fill,
                             html_text(hover(e, label)));
        }
        h += "</g>";
    }
    h += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">upper half: compute (blue), "
                     "waits hatched red; lower half: transfers (orange){}</text></svg>",
                     left, height - 6,
                     lanes.size() < static_cast<std::size_t>(world)
                         ? fmt::format("; {} of {} ranks", lanes.size(), world)
                         : "");
    return h;
}

std::string timeline_section(const std::vector<case_data>& cases) {
    const auto chosen = timeline_cases(cases);
    if (chosen.empty())
        return "";
    std::string md = "\n## Timelines\n\nOne iteration (the median) of each scheme at the largest "
                     "P traced (--trace), a lane per rank: the rank that set the iteration's "
                     "length first. `ringscale-stats overlap` prints every step; "
                     "`ringscale-stats trace` writes the iteration for Perfetto.\n\n";
    for (const case_data* c : chosen)
        for (const traced_iteration& it : traced_iterations(*c)) {
            if (it.reason != "median")
                continue;
            const overlap_summary s = summarize_overlap(it.events);
            const std::string worst = worst_step_text(s);
            md += "- " + markdown_text(case_label(*c, true)) + ": worst step " +
                  (worst.empty() ? std::string("none (no transfer)") : worst) + "; critical path " +
                  critical_path_text(s) + "\n";
        }
    return md;
}

std::string timeline_html(const std::vector<case_data>& cases) {
    std::string h;
    std::size_t n = 0;
    for (const case_data* c : timeline_cases(cases))
        for (const traced_iteration& it : traced_iterations(*c))
            if (it.reason == "median")
                h += "<figure class=\"plot timeline\">" +
                     timeline_svg(it, case_label(*c, true), fmt::format("tl{}", n++)) +
                     "<figcaption>" + html_text(case_label(*c, true)) + "</figcaption></figure>\n";
    return h;
}

} // namespace ringscale::analysis
