// One model of the report that report.md and report.html are both written from: the
// report's blocks in order (headings with their anchors, paragraphs, lists, tables, plots),
// and the structured results the page draws beyond the text (every history series). The
// sections compose Markdown fragments; read_report_model reads them into blocks once, and
// each writer renders the blocks, so the two outputs cannot drift apart.
#pragma once

#include "analysis/history/series.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

enum class block_kind { heading, paragraph, list, table, plot };

struct report_block {
    block_kind kind = block_kind::paragraph;
    int level = 0;                  ///< heading: 1 (the title), 2 (a section), 3 (a subsection)
    std::string id;                 ///< heading: its anchor, unique in the report
    std::string text;               ///< heading: its title; plot: the PNG's stem
    std::vector<std::string> lines; ///< the Markdown source (paragraph, list items, table rows)
};

struct report_model {
    std::vector<report_block> blocks;
    const history::series_set* history = nullptr; ///< every series charted on the page
    /// The case key of each row of the table in the section `compared_section` (compare's
    /// verdicts, --baseline), in the table's order: the page links each row to its series.
    std::vector<std::string> compared_keys;
    /// The section "Timelines" (--trace): its inline SVG figures, escaped (timeline_svg.hpp).
    std::string timelines_html;
};

/// The anchor of the report's section "Compared with the baseline" (report.cpp's heading).
inline constexpr const char* compared_section = "compared-with-the-baseline";

/// The blocks of `md` (the report's Markdown): "#"-headings (anchors from their words, made
/// unique), image lines `![alt](STEM.png)` as plots, runs of '|' lines as tables, runs of
/// "- " lines as lists, other runs of lines as paragraphs.
report_model read_report_model(const std::string& md);

/// report.md's text from the model.
std::string markdown_of(const report_model& m);

/// The cells of one Markdown table row: split at each '|' not escaped by a backslash, the outer
/// empty cells dropped, each cell trimmed; its Markdown escapes kept (render them inline).
std::vector<std::string> table_cells(const std::string& row);

} // namespace ringscale::analysis
