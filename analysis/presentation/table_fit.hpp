// Text tables a person reads in a terminal: every text table fits in 160 columns by
// default. A label column keeps only the key=value fields that vary between its rows (with its
// first word, the job); what every row shares is stated once above the table. A column whose
// long values repeat (an environment) shows numbers, with the values in a legend above. A
// column still too wide is cut with "...". `--wide` (every subcommand) shows everything in
// full. Markdown, CSV and JSON are never changed.
#pragma once

#include "table.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// The width text tables fit by default.
inline constexpr std::size_t table_columns = 160;

/// Whether text tables show every field in full: true until the command line sets it (false
/// by default there, true with --wide), so a library caller gets every field.
void set_wide_tables(bool wide);
bool wide_tables();

/// Make `t` (display text, visible columns only) at most `columns` wide; returns the lines to
/// print above it (common fields, legends), each at most `columns` wide.
std::vector<std::string> fit_table(table& t, std::size_t columns);

/// `text` wrapped at `columns` on spaces; continuation lines start with `indent` spaces. A
/// word longer than a line is cut, unless `keep_words` (it then stands alone, whole).
std::string wrap_text(const std::string& text, std::size_t columns, std::size_t indent = 0,
                      bool keep_words = false);

/// Markdown with its prose lines (paragraphs, list items) wrapped at `columns` (soft line
/// breaks: it renders the same); tables, headings, code blocks, images and indented lines
/// stay as they are, and no word (a link) is cut.
std::string wrap_markdown_prose(const std::string& md, std::size_t columns);

} // namespace ringscale::analysis
