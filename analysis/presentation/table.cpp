#include "table.hpp"

#include "table_fit.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

output_format parse_format(const std::string& name) {
    if (name == "text")
        return output_format::text;
    if (name == "md")
        return output_format::md;
    if (name == "csv")
        return output_format::csv;
    if (name == "json")
        return output_format::json;
    throw config_error(fmt::format("--format: unknown format '{}' (text, md, csv or json)", name));
}

cell text_cell(const std::string& s) {
    return {s, s};
}

cell number_cell(double v, const std::string& text) {
    if (!std::isfinite(v))
        return {"-", nullptr};
    return {text, v};
}

cell int_cell(long long v) {
    return {std::to_string(v), v};
}

std::string json_text(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json to_json(const table& t) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : t.rows) {
        nlohmann::json obj = nlohmann::json::object();
        for (std::size_t i = 0; i < row.size() && i < t.keys.size(); ++i)
            obj[t.keys[i]] = row[i].value;
        rows.push_back(obj);
    }
    return rows;
}

namespace {

bool numeric_column(const table& t, std::size_t col) {
    for (const auto& row : t.rows)
        if (col < row.size() && row[col].value.is_string())
            return false;
    return true;
}

/// A cell's text for a terminal or Markdown: one line, no control characters (text from a
/// results file must not move the cursor), and in Markdown no '|' that would split the cell;
/// a text cell in Markdown (identities, labels, errors: text from a file) through
/// markdown_text, so it cannot become a link, an image or HTML in report.md.
std::string display_text(const std::string& s, bool markdown, bool text_value = false) {
    if (markdown && text_value)
        return markdown_text(s);
    std::string out = terminal_text(s);
    if (!markdown || out.find('|') == std::string::npos)
        return out;
    std::string md;
    for (char ch : out)
        md += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return md;
}

std::string render_text(const table& full, bool markdown) {
    table t; // the visible columns only, as displayed
    t.fit_drop_first = full.fit_drop_first;
    for (std::size_t i = 0; i < full.titles.size(); ++i)
        if (!full.machine_only[i])
            t.add_column(display_text(full.titles[i], markdown), full.keys[i]);
    for (const auto& row : full.rows) {
        t.rows.emplace_back();
        for (std::size_t i = 0; i < row.size(); ++i)
            if (!full.machine_only[i])
                t.rows.back().push_back(
                    {display_text(row[i].text, markdown, row[i].value.is_string()), row[i].value});
    }
    // A terminal's table fits 160 columns unless --wide (table_fit.hpp); Markdown is a file.
    const std::vector<std::string> above =
        markdown || wide_tables() ? std::vector<std::string>{} : fit_table(t, table_columns);
    const std::size_t ncol = t.titles.size();
    std::vector<std::size_t> width(ncol);
    for (std::size_t i = 0; i < ncol; ++i) {
        width[i] = t.titles[i].size();
        for (const auto& row : t.rows)
            width[i] = std::max(width[i], row[i].text.size());
    }
    std::vector<bool> right(ncol);
    for (std::size_t i = 0; i < ncol; ++i)
        right[i] = numeric_column(t, i);
    auto line = [&](auto get) {
        std::string s = markdown ? "|" : "";
        for (std::size_t i = 0; i < ncol; ++i) {
            const std::string v = get(i);
            const std::string pad(width[i] - std::min(width[i], v.size()), ' ');
            s += (markdown ? " " : (i ? "  " : "")) + (right[i] ? pad + v : v + pad);
            s += markdown ? " |" : "";
        }
        while (!markdown && !s.empty() && s.back() == ' ')
            s.pop_back();
        return s + "\n";
    };
    std::string out;
    for (const std::string& a : above)
        out += a + "\n";
    out += line([&](std::size_t i) { return t.titles[i]; });
    if (markdown) {
        out += "|";
        for (std::size_t i = 0; i < ncol; ++i)
            out += right[i] ? std::string(width[i] + 1, '-') + ":|"
                            : std::string(width[i] + 2, '-') + "|";
        out += "\n";
    } else {
        std::size_t total = 0;
        for (std::size_t i = 0; i < ncol; ++i)
            total += width[i] + (i ? 2 : 0);
        out += std::string(total, '-') + "\n";
    }
    for (const auto& row : t.rows)
        out += line([&](std::size_t i) { return row[i].text; });
    return out;
}

std::string render_csv(const table& t) {
    std::string out;
    for (std::size_t i = 0; i < t.keys.size(); ++i)
        out += (i ? "," : "") + csv_field(t.keys[i]);
    out += "\n";
    for (const auto& row : t.rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            const auto& v = row[i].value;
            std::string s = v.is_null()     ? ""
                            : v.is_string() ? v.get<std::string>()
                                            : json_text(v, -1);
            out += (i ? "," : "") + csv_field(s);
        }
        out += "\n";
    }
    return out;
}

/// Remove columns whose cells are all null (and "-" or empty as text).
void drop_empty_columns(table& t) {
    for (std::size_t c = t.keys.size(); c-- > 0;) {
        bool empty = true;
        for (const auto& row : t.rows)
            empty = empty && row[c].value.is_null() && (row[c].text.empty() || row[c].text == "-");
        if (!empty || t.rows.empty())
            continue;
        t.keys.erase(t.keys.begin() + static_cast<std::ptrdiff_t>(c));
        t.machine_only.erase(t.machine_only.begin() + static_cast<std::ptrdiff_t>(c));
        t.titles.erase(t.titles.begin() + static_cast<std::ptrdiff_t>(c));
        for (auto& row : t.rows)
            row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    }
}

} // namespace

std::string render(const table& full, output_format format) {
    table pruned;
    if (full.prune_for_people && (format == output_format::text || format == output_format::md)) {
        pruned = full;
        drop_empty_columns(pruned);
    }
    const table& t = pruned.titles.empty() ? full : pruned;
    switch (format) {
    case output_format::text:
        return (t.caption.empty() ? ""
                : wide_tables()   ? terminal_text(t.caption) + "\n"
                                  : wrap_text(terminal_text(t.caption), table_columns, 4) + "\n") +
               render_text(t, false);
    case output_format::md:
        return (t.caption.empty() ? "" : markdown_text(t.caption) + "\n\n") + render_text(t, true);
    case output_format::csv:
        return render_csv(t);
    case output_format::json:
        return json_text(to_json(t)) + "\n";
    }
    return {};
}

} // namespace ringscale::analysis
