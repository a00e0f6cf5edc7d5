#include "html_tables.hpp"

#include "html_escape.hpp"
#include "report_model.hpp"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

bool separator_row(const std::vector<std::string>& cells) {
    for (const std::string& c : cells)
        if (c.empty() || c.find_first_not_of("-: ") != std::string::npos)
            return false;
    return !cells.empty();
}

/// The number a cell's text starts with ("1.23 ms" -> 0.00123, "+4.1%" -> 4.1), NaN if none.
double leading_number(const std::string& text) {
    const char* begin = text.c_str();
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(v))
        return NAN;
    const std::string unit = std::string(end).substr(0, 3);
    if (unit.rfind(" ms", 0) == 0)
        return v * 1e-3;
    if (unit.rfind(" us", 0) == 0)
        return v * 1e-6;
    if (unit.rfind(" ns", 0) == 0)
        return v * 1e-9;
    return v;
}

} // namespace

std::string html_inline(const std::string& md) {
    std::string out;
    bool strong = false;
    for (std::size_t i = 0; i < md.size(); ++i) {
        const char ch = md[i];
        if (ch == '\\' && i + 1 < md.size()) {
            out += html_text(md.substr(++i, 1));
        } else if (ch == '`' && md.find('`', i + 1) != std::string::npos) {
            const auto end = md.find('`', i + 1);
            out += "<code>" + html_text(md.substr(i + 1, end - i - 1)) + "</code>";
            i = end;
        } else if (ch == '*' && i + 1 < md.size() && md[i + 1] == '*') {
            out += strong ? "</strong>" : "<strong>";
            strong = !strong;
            ++i;
        } else if (ch == '[' && md.find("](", i) != std::string::npos &&
                   md.find(')', md.find("](", i)) != std::string::npos) {
            const auto mid = md.find("](", i);
            const auto end = md.find(')', mid);
            const std::string text = md.substr(i + 1, mid - i - 1);
            const std::string href = md.substr(mid + 2, end - mid - 2);
            if (html_safe_href(href) && text.find('[') == std::string::npos)
                out += "<a href=\"" + html_text(href) + "\">" + html_inline(text) + "</a>";
            else
                out += html_text(md.substr(i, end + 1 - i));
            i = end;
        } else {
            // Bytes pass through whole: html_text of a lone byte of a UTF-8 sequence would
            // mark it invalid, so runs of plain text are escaped together.
            std::size_t end = i;
            while (end < md.size() && md[end] != '\\' && md[end] != '`' && md[end] != '*' &&
                   md[end] != '[')
                ++end;
            if (end == i)
                end = i + 1;
            out += html_text(md.substr(i, end - i));
            i = end - 1;
        }
    }
    return strong ? out + "</strong>" : out;
}

std::string identity_tokens(const std::string& label, const std::string& env) {
    std::string out = label;
    std::size_t at = 0;
    while (!env.empty() && at <= env.size()) {
        auto end = env.find(" | ", at);
        if (end == std::string::npos)
            end = env.size();
        std::string v = env.substr(at, end - at);
        for (char& c : v)
            if (c == ' ')
                c = '_';
        out += " env=" + v;
        at = end + 3;
    }
    return out;
}

std::string html_table(const std::vector<std::string>& titles, const std::vector<html_row>& rows,
                       const std::string& css_class) {
    std::string h = "<div class=\"scroll\"><table class=\"sortable" +
                    (css_class.empty() ? "" : " " + css_class) + "\"><thead><tr>";
    for (const std::string& t : titles)
        h += "<th>" + html_text(t) + "</th>";
    h += "</tr></thead><tbody>\n";
    for (const html_row& r : rows) {
        h += "<tr";
        if (!r.id.empty())
            h += " id=\"" + html_text(r.id) + "\"";
        if (!r.tokens.empty())
            h += " data-f=\"" + html_text(r.tokens) + "\"";
        h += r.history ? " data-history=\"1\"" : "";
        h += r.changed ? " data-changed=\"1\">" : ">";
        for (const html_cell& c : r.cells)
            h += std::isfinite(c.sort)
                     ? fmt::format("<td data-v=\"{:.9g}\">{}</td>", c.sort, c.html)
                     : "<td>" + c.html + "</td>";
        h += "</tr>\n";
    }
    return h + "</tbody></table></div>\n";
}

std::string html_table_of_markdown(const std::vector<std::string>& md_rows,
                                   const html_column* extra) {
    std::vector<std::string> titles;
    std::vector<html_row> rows;
    for (const std::string& line : md_rows) {
        const std::vector<std::string> cells = table_cells(line);
        if (separator_row(cells))
            continue;
        if (titles.empty()) {
            for (const std::string& c : cells)
                titles.push_back(c);
            continue;
        }
        html_row r;
        for (const std::string& c : cells) {
            r.cells.push_back({html_inline(c), leading_number(c)});
            if (r.tokens.empty()) // the first column names the case
                for (std::size_t i = 0; i < c.size(); ++i)
                    r.tokens += c[i] == '\\' && i + 1 < c.size() ? c[++i] : c[i];
        }
        if (extra) {
            const std::size_t i = rows.size();
            r.cells.push_back(i < extra->cells.size() ? extra->cells[i] : html_cell{});
            r.id = i < extra->ids.size() ? extra->ids[i] : "";
        }
        rows.push_back(std::move(r));
    }
    // The titles are Markdown too: render them as text without their escapes.
    std::vector<std::string> plain;
    for (const std::string& t : titles) {
        std::string p;
        for (std::size_t i = 0; i < t.size(); ++i)
            p += t[i] == '\\' && i + 1 < t.size() ? t[++i] : t[i];
        plain.push_back(p);
    }
    if (extra)
        plain.push_back(extra->title);
    return html_table(plain, rows);
}

} // namespace ringscale::analysis
