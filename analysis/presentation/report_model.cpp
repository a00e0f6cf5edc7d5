#include "report_model.hpp"

#include "html_escape.hpp"

#include <set>

namespace ringscale::analysis {

namespace {

std::string trimmed(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos)
        return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool starts(const std::string& s, const char* p) {
    return s.rfind(p, 0) == 0;
}

/// The stem of an image line "![alt](STEM.png)", "" when `line` is not one.
std::string image_stem(const std::string& line) {
    if (!starts(line, "![") || line.back() != ')')
        return {};
    const auto open = line.find("](");
    if (open == std::string::npos)
        return {};
    const std::string target = line.substr(open + 2, line.size() - open - 3);
    if (target.size() < 5 || target.compare(target.size() - 4, 4, ".png") != 0 ||
        !html_safe_href(target))
        return {};
    return target.substr(0, target.size() - 4);
}

block_kind kind_of(const std::string& line) {
    if (starts(line, "|"))
        return block_kind::table;
    if (starts(line, "- "))
        return block_kind::list;
    return block_kind::paragraph;
}

} // namespace

std::vector<std::string> table_cells(const std::string& row) {
    std::vector<std::string> cells(1);
    for (std::size_t i = 0; i < row.size(); ++i) {
        if (row[i] == '\\' && i + 1 < row.size()) {
            cells.back() += row.substr(i, 2);
            ++i;
        } else if (row[i] == '|') {
            cells.emplace_back();
        } else {
            cells.back() += row[i];
        }
    }
    for (std::string& c : cells)
        c = trimmed(c);
    if (!cells.empty() && cells.front().empty())
        cells.erase(cells.begin());
    if (!cells.empty() && cells.back().empty())
        cells.pop_back();
    return cells;
}

report_model read_report_model(const std::string& md) {
    report_model m;
    std::set<std::string> ids;
    // The paragraph, list or table that the next line may extend (an index: blocks grow).
    std::size_t open = std::string::npos;
    for (std::size_t at = 0; at <= md.size();) {
        std::size_t end = md.find('\n', at);
        if (end == std::string::npos)
            end = md.size();
        const std::string line = md.substr(at, end - at);
        at = end + 1;
        if (trimmed(line).empty()) {
            open = std::string::npos;
            continue;
        }
        if (starts(line, "#")) {
            const auto hashes = line.find_first_not_of('#');
            report_block h{block_kind::heading,
                           static_cast<int>(hashes),
                           "",
                           trimmed(line.substr(hashes)),
                           {}};
            std::string id = html_slug(h.text);
            for (int n = 2; !ids.insert(id).second; ++n)
                id = html_slug(h.text) + "-" + std::to_string(n);
            h.id = id;
            m.blocks.push_back(h);
            open = std::string::npos;
            continue;
        }
        if (const std::string stem = image_stem(line); !stem.empty()) {
            m.blocks.push_back({block_kind::plot, 0, "", stem, {line}});
            open = std::string::npos;
            continue;
        }
        const block_kind k = kind_of(line);
        if (open != std::string::npos && m.blocks[open].kind == k) {
            m.blocks[open].lines.push_back(line);
            continue;
        }
        m.blocks.push_back({k, 0, "", "", {line}});
        open = m.blocks.size() - 1;
    }
    return m;
}

std::string markdown_of(const report_model& m) {
    std::string md;
    for (const report_block& b : m.blocks) {
        if (!md.empty())
            md += "\n";
        if (b.kind == block_kind::heading) {
            md += std::string(static_cast<std::size_t>(b.level), '#') + " " + b.text + "\n";
            continue;
        }
        for (const std::string& l : b.lines)
            md += l + "\n";
    }
    return md;
}

} // namespace ringscale::analysis
