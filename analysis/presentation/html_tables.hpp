// Tables for report.html: each in its own scrolling box, sortable by column (the
// page's script reads each cell's text, or its data-v number), rows carrying the identity
// tokens the page's filters match (data-f) and whether they changed (data-changed).
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// One cell: `html` (already escaped) and, for sorting, a number (NaN: sort by the text).
struct html_cell {
    std::string html;
    double sort = std::numeric_limits<double>::quiet_NaN();
};

struct html_row {
    std::vector<html_cell> cells;
    std::string id;     ///< an anchor for the row ("" none)
    std::string tokens; ///< identity tokens for the filters, space-separated (raw text)
    bool changed = false;
    bool history = false; ///< a history row: "changed only" hides it when unchanged
};

/// A sortable table: `titles` as plain text, escaped here.
std::string html_table(const std::vector<std::string>& titles, const std::vector<html_row>& rows,
                       const std::string& css_class = "");

/// A column the page adds to a Markdown table (e.g. compare's links to the series): its title,
/// and for each data row in order its cell and the row's anchor ("" none); rows past the
/// end of `cells` get an empty cell.
struct html_column {
    std::string title;
    std::vector<html_cell> cells;
    std::vector<std::string> ids;
};

/// A Markdown table of the report (its rows, the separator row among them) as a sortable table;
/// each cell's Markdown rendered inline and escaped; `extra` (may be null) added last.
std::string html_table_of_markdown(const std::vector<std::string>& md_rows,
                                   const html_column* extra = nullptr);

/// Markdown inline text (the report's subset: backslash escapes, `code`, **strong**, [text](a
/// file beside the page or an #anchor)) as escaped HTML; any other link's target is shown as
/// text.
std::string html_inline(const std::string& md);

/// The identity tokens of a series or case label ("job/variant a=1 P=4" -> "job/variant a=1 P=4")
/// and an environment ("x | y" -> "env=x env=y").
std::string identity_tokens(const std::string& label, const std::string& env = "");

} // namespace ringscale::analysis
