#include "table_fit.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <set>
#include <sstream>

namespace ringscale::analysis {

namespace {

bool g_wide = true; // in full until the command line says otherwise (parse_cli)

/// At most `n` bytes of `s`, never ending inside a UTF-8 sequence.
std::string cut(const std::string& s, std::size_t n) {
    if (s.size() <= n)
        return s;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80)
        --n;
    return s.substr(0, n);
}

std::size_t table_width(const table& t) {
    std::size_t total = 0;
    for (std::size_t c = 0; c < t.titles.size(); ++c) {
        std::size_t w = t.titles[c].size();
        for (const auto& row : t.rows)
            w = std::max(w, row[c].text.size());
        total += w + (c ? 2 : 0);
    }
    return total;
}

std::size_t column_width(const table& t, std::size_t c) {
    std::size_t w = 0;
    for (const auto& row : t.rows)
        w = std::max(w, row[c].text.size());
    return w;
}

bool text_column(const table& t, std::size_t c) {
    for (const auto& row : t.rows)
        if (row[c].value.is_string())
            return true;
    return false;
}

std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

/// A field of a label that may be stated once: its first word (job/variant) or a key=value.
bool field_word(const std::vector<std::string>& ws, std::size_t i) {
    return i == 0 || ws[i].find('=') != std::string::npos;
}

/// Whether a figure column holds a word instead of a figure somewhere ("no-op",
/// "impossible"): a flag a reader needs, left out only after the plain figures.
bool flagged(const table& t, std::size_t c) {
    for (const auto& row : t.rows) {
        const std::string& s = row[c].text;
        if (!s.empty() && s != "-" && std::isalpha(static_cast<unsigned char>(s[0])))
            return true;
    }
    return false;
}

/// Column `c`'s fields shared by every row, taken out of the cells; the line saying them.
std::string strip_common(table& t, std::size_t c) {
    std::vector<std::vector<std::string>> cells;
    for (const auto& row : t.rows)
        cells.push_back(words(row[c].text));
    std::vector<std::string> common;
    const auto& first = cells.front();
    if (std::none_of(first.begin(), first.end(),
                     [](const std::string& w) { return w.find('=') != std::string::npos; }))
        return ""; // not a label of key=value fields (an environment, a path)
    for (std::size_t i = 0; i < first.size(); ++i) {
        // One row keeps its job; a first word that is a key=value (crossover's shape) is a
        // field like the others, stated once with them.
        const bool job = i == 0 && first[0].find('=') == std::string::npos;
        if (!field_word(first, i) || (job && t.rows.size() == 1))
            continue;
        bool everywhere = true;
        for (const auto& ws : cells)
            everywhere = everywhere && std::find(ws.begin(), ws.end(), first[i]) != ws.end();
        if (everywhere && std::find(common.begin(), common.end(), first[i]) == common.end())
            common.push_back(first[i]);
    }
    if (common.empty())
        return "";
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        std::string kept;
        for (const std::string& w : cells[r])
            if (std::find(common.begin(), common.end(), w) == common.end())
                kept += (kept.empty() ? "" : " ") + w;
        t.rows[r][c].text = kept.empty() ? "-" : kept;
    }
    return fmt::format("{} (every row): {}", t.titles[c], fmt::join(common, " "));
}

/// Column `c`'s values numbered (#1, #2, ... in order of first appearance); the legend lines.
/// With `longest`, only the values longer than that are.
std::vector<std::string> number_values(table& t, std::size_t c, std::size_t longest = 0) {
    std::map<std::string, std::size_t> number;
    std::vector<std::string> legend;
    const std::string name = t.titles[c].empty() ? "note" : t.titles[c];
    for (auto& row : t.rows) {
        if (longest > 0 && row[c].text.size() <= longest)
            continue;
        auto [it, fresh] = number.emplace(row[c].text, number.size() + 1);
        if (fresh)
            legend.push_back(fmt::format("{} #{}: {}", name, it->second, row[c].text));
        row[c].text = fmt::format("#{}", it->second);
    }
    return legend;
}

/// Whether column `c`'s long values repeat (an environment, a source): worth a legend.
bool repeats(const table& t, std::size_t c) {
    std::set<std::string> distinct;
    for (const auto& row : t.rows)
        distinct.insert(row[c].text);
    return distinct.size() < t.rows.size() || t.rows.size() == 1;
}

/// The widest text column that `ok` accepts, or npos.
template <class Ok>
std::size_t widest(const table& t, std::size_t at_least, Ok ok) {
    std::size_t best = std::string::npos, best_w = at_least;
    for (std::size_t c = 0; c < t.titles.size(); ++c)
        if (text_column(t, c) && column_width(t, c) > best_w && ok(c))
            best = c, best_w = column_width(t, c);
    return best;
}

/// Cut the widest text columns (the first only with `labels`) with "..." until `t` fits
/// `columns`, none below `floor` columns.
void cut_columns(table& t, std::size_t columns, std::size_t floor, bool labels) {
    while (table_width(t) > columns) {
        const std::size_t c = widest(t, floor, [&](std::size_t k) { return labels || k > 0; });
        if (c == std::string::npos)
            return;
        const std::size_t over = table_width(t) - columns, now = column_width(t, c);
        const std::size_t keep = now > over + floor ? now - over : floor; // narrows each pass
        for (auto& row : t.rows)
            if (row[c].text.size() > keep)
                row[c].text = cut(row[c].text, keep - 3) + "...";
    }
}

} // namespace

void set_wide_tables(bool wide) {
    g_wide = wide;
}

bool wide_tables() {
    return g_wide;
}

std::string wrap_text(const std::string& text, std::size_t columns, std::size_t indent,
                      bool keep_words) {
    indent = std::min(indent, columns / 2);
    std::string out, line;
    bool empty = true; // `line` holds no word yet
    auto flush = [&] {
        out += (out.empty() ? "" : "\n") + line;
        line = std::string(indent, ' ');
        empty = true;
    };
    for (std::string w : words(text)) {
        while (!w.empty()) {
            if (!empty && line.size() + 1 + w.size() > columns) {
                flush();
                continue;
            }
            const std::size_t room = columns - line.size() - (empty ? 0 : 1);
            std::string part = keep_words ? w : cut(w, room);
            if (part.empty()) // a character wider than the room left: take it whole
                part = w.substr(0, std::max<std::size_t>(1, room));
            line += (empty ? "" : " ") + part;
            empty = false;
            w = w.substr(part.size());
            if (!w.empty())
                flush();
        }
    }
    if (!empty || out.empty())
        out += (out.empty() ? "" : "\n") + line;
    return out;
}

std::string wrap_markdown_prose(const std::string& md, std::size_t columns) {
    std::istringstream in(md);
    std::string out;
    bool fence = false;
    for (std::string line; std::getline(in, line);) {
        const bool fence_line = line.rfind("```", 0) == 0;
        fence = fence != fence_line;
        const bool prose = !fence && !fence_line && line.size() > columns && !line.empty() &&
                           std::string("|#!< \t>").find(line[0]) == std::string::npos;
        if (!prose) {
            out += line + "\n";
            continue;
        }
        // A list item's continuation lines start under its text.
        std::size_t indent = 0;
        if (line.rfind("- ", 0) == 0 || line.rfind("* ", 0) == 0)
            indent = 2;
        else if (const auto dot = line.find(". "); dot != std::string::npos && dot > 0 && dot < 4 &&
                                                   line.find_first_not_of("0123456789") == dot)
            indent = dot + 2;
        out += wrap_text(line, columns, indent, true) + "\n";
    }
    if (!md.empty() && md.back() != '\n' && !out.empty())
        out.pop_back();
    return out;
}

std::vector<std::string> fit_table(table& t, std::size_t columns) {
    std::vector<std::string> above;
    if (t.rows.empty() || table_width(t) <= columns)
        return above;
    // 1. A label's fields every row shares, stated once.
    for (std::size_t c = 0; c < t.titles.size(); ++c)
        if (text_column(t, c) && column_width(t, c) > 30)
            if (std::string line = strip_common(t, c); !line.empty())
                above.push_back(line);
    // 2. Long values that repeat (environments), numbered in a legend, widest first; never
    //    the row labels nor the last column (a verdict, a state: read where it stands).
    while (table_width(t) > columns) {
        const std::size_t c = widest(t, 16, [&](std::size_t k) {
            return k > 0 && k + 1 < t.titles.size() && repeats(t, k) &&
                   t.rows.front()[k].text.rfind('#', 0) != 0;
        });
        if (c == std::string::npos)
            break;
        for (std::string& line : number_values(t, c))
            above.push_back(std::move(line));
    }
    // 3. The last column (a verdict, a note: why a point is marked) is never cut: its values
    //    longer than 24 columns are numbered and stated in full above. Other text columns are
    //    cut to 24 columns, with "...".
    if (const std::size_t last = t.titles.size() - 1;
        last > 0 && table_width(t) > columns && text_column(t, last))
        for (std::string& line : number_values(t, last, 24))
            above.push_back(std::move(line));
    cut_columns(t, columns, 24, false);
    // 3b. Long row labels cut to 48 columns before any figure is left out (a label's fields
    //     are above; its figures are what the table is for).
    cut_columns(t, columns, 48, true);
    // 4. Columns left out from the right, plain figures before text and flags, never the
    //    row labels nor the last column (a verdict), and named above.
    //    The table's own fit_drop_first columns go before any other.
    std::vector<std::string> dropped;
    const auto drop = [&](std::size_t c) {
        dropped.insert(dropped.begin(), t.titles[c]);
        t.titles.erase(t.titles.begin() + static_cast<std::ptrdiff_t>(c));
        t.keys.erase(t.keys.begin() + static_cast<std::ptrdiff_t>(c));
        t.machine_only.erase(t.machine_only.begin() + static_cast<std::ptrdiff_t>(c));
        for (auto& row : t.rows)
            row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    };
    const auto& first = t.fit_drop_first;
    for (std::size_t c = t.titles.size() - 1; c-- > 1 && table_width(t) > columns;)
        if (std::find(first.begin(), first.end(), t.titles[c]) != first.end())
            drop(c);
    for (const bool figures : {true, false})
        for (std::size_t c = t.titles.size() - 1; c-- > 1 && table_width(t) > columns;)
            if ((text_column(t, c) || flagged(t, c)) != figures)
                drop(c);
    if (!dropped.empty())
        above.push_back(fmt::format("columns left out: {}", fmt::join(dropped, ", ")));
    // 5. The row labels cut last.
    cut_columns(t, columns, 9, true);
    std::vector<std::string> lines;
    for (const std::string& a : above) {
        std::istringstream wrapped(wrap_text(a, columns, 4));
        for (std::string l; std::getline(wrapped, l);)
            lines.push_back(l);
    }
    if (!lines.empty())
        lines.push_back("(--wide: every field in full)");
    return lines;
}

} // namespace ringscale::analysis
