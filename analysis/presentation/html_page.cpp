#include "html_page.hpp"

#include "html_assets.hpp"
#include "html_escape.hpp"
#include "html_history.hpp"
#include "html_svg.hpp"
#include "html_tables.hpp"

#include <fmt/format.h>
#include <map>
#include <random>

namespace ringscale::analysis {

namespace {

/// A fresh nonce for the page's one script: 24 hex digits.
std::string script_nonce() {
    std::random_device rd;
    return fmt::format("{:08x}{:08x}{:08x}", rd(), rd(), rd());
}

std::string joined(const std::vector<std::string>& lines, const char* sep) {
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i)
        out += (i ? sep : "") + lines[i];
    return out;
}

struct page_state {
    const report_model& m;
    const std::map<std::string, std::string>& svgs;
    const std::string& dir;
    bool plots;
    std::string section; ///< the open section's id ("" none)
    /// In the history section after its first table: the Markdown's change table, its PNG
    /// trends and their captions, which the page's own history part replaces.
    bool history_rest = false;
};

/// A plot block: its inline SVG, or a note where it could not be drawn.
std::string plot_html(const report_block& b, const page_state& st) {
    const auto it = st.svgs.find(b.text);
    const std::string id = "plot-" + html_slug(b.text);
    if (it == st.svgs.end() || it->second.empty())
        return "<p class=\"note\" id=\"" + id + "\">" +
               html_text(fmt::format("Plot {}.png: no SVG could be drawn (see the PNG beside "
                                     "report.md).",
                                     b.text)) +
               "</p>\n";
    return "<figure class=\"plot\" id=\"" + id + "\">" + it->second + "</figure>\n";
}

/// compare's table: each row with its anchor and a link to the case's series.
std::string compared_table(const report_block& b, const report_model& m) {
    html_column series{"series on this page", {}, {}};
    for (const std::string& key : m.compared_keys) {
        series.cells.push_back({compared_series_html(m.history, key)});
        series.ids.push_back(html_anchor("compared", key));
    }
    return html_table_of_markdown(b.lines, &series);
}

std::string close_section(page_state& st) {
    if (st.section.empty())
        return {};
    std::string h;
    if (st.section == "history" && st.m.history)
        h += history_html(*st.m.history, st.dir, st.plots);
    if (st.section == "timelines")
        h += st.m.timelines_html;
    st.section.clear();
    st.history_rest = false;
    return h + "</section>\n";
}

std::string block_html(const report_block& b, page_state& st) {
    const bool history = st.section == "history" && st.m.history;
    if (history && b.kind == block_kind::table)
        st.history_rest = true;
    if (st.history_rest && b.kind != block_kind::heading)
        return {};
    switch (b.kind) {
    case block_kind::heading:
        if (b.level <= 1)
            return {}; // the page's header holds the title
        if (b.level == 2) {
            std::string h = close_section(st);
            st.section = b.id;
            return h + fmt::format("<section id=\"{0}\"><h2>{1}<a class=\"anchor\" "
                                   "href=\"#{0}\">#</a></h2>\n",
                                   b.id, html_inline(b.text));
        }
        return fmt::format("<h{0} id=\"{1}\">{2}<a class=\"anchor\" href=\"#{1}\">#</a></h{0}>\n",
                           std::min(b.level, 6), b.id, html_inline(b.text));
    case block_kind::paragraph:
        return "<p>" + html_inline(joined(b.lines, "\n")) + "</p>\n";
    case block_kind::list: {
        std::string h = "<ul>\n";
        for (const std::string& l : b.lines)
            h += "<li>" + html_inline(l.substr(2)) + "</li>\n";
        return h + "</ul>\n";
    }
    case block_kind::table: // the history's change table is the regressions table below
        if (history)
            return {};
        return st.section == compared_section ? compared_table(b, st.m)
                                              : html_table_of_markdown(b.lines);
    case block_kind::plot: // the history's PNG trends: every series is charted below
        return history ? std::string() : plot_html(b, st);
    }
    return {};
}

std::string navigation(const report_model& m) {
    std::string h = "<nav>";
    for (const report_block& b : m.blocks)
        if (b.kind == block_kind::heading && b.level == 2)
            h += "<a href=\"#" + b.id + "\">" + html_inline(b.text) + "</a>";
    return h + "</nav>\n";
}

const char* controls =
    "<div class=\"controls\"><label><input type=\"checkbox\" id=\"show-marked\" checked> show "
    "marked launches (hollow orange: measured on a busy machine, never deciding a verdict)"
    "</label><label><input type=\"checkbox\" id=\"changed-only\"> changed series only</label>"
    "<label>identity <select id=\"filter-field\"><option value=\"\">all</option></select>"
    "</label><label>filter <input type=\"search\" id=\"filter-text\" placeholder=\"text in a "
    "row or series\"></label></div>\n";

} // namespace

std::string html_page(const report_model& m, const std::string& dir, bool plots) {
    const std::map<std::string, std::string> svgs =
        plots ? report_svgs(dir) : std::map<std::string, std::string>{};
    const std::string nonce = script_nonce();
    std::string title = "ringscale report";
    for (const report_block& b : m.blocks)
        if (b.kind == block_kind::heading && b.level == 1) {
            title = b.text;
            break;
        }
    std::string h = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
        "'unsafe-inline'; script-src 'nonce-{}'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<header><h1 id=\"top\">{}</h1>\n",
        nonce, html_text(title), html_page_css, html_text(title));
    h += navigation(m) + controls + "</header>\n<main>\n";
    if (!plots)
        h += "<p class=\"note\">gnuplot not found: plots were not drawn.</p>\n";
    page_state st{m, svgs, dir, plots, {}};
    for (const report_block& b : m.blocks)
        h += block_html(b, st);
    h += close_section(st);
    return h + "</main>\n<script nonce=\"" + nonce + "\">" + html_page_js +
           "</script>\n</body>\n</html>\n";
}

} // namespace ringscale::analysis
