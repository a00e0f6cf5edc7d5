// A small table model and its renderers: aligned terminal text, Markdown, CSV and JSON.
// Each cell carries display text and a typed value (numbers at full precision for CSV/JSON).
#pragma once

#include "src/base/text_escape.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ringscale::analysis {

enum class output_format { text, md, csv, json };

/// Parse "text", "md", "csv" or "json"; config_error otherwise.
output_format parse_format(const std::string& name);

struct cell {
    std::string text;
    nlohmann::json value; ///< number, string, bool or null
};

/// A text cell (value = the same string).
cell text_cell(const std::string& s);
/// A number shown as `text`; NaN becomes null and "-".
cell number_cell(double v, const std::string& text);
/// An integer cell.
cell int_cell(long long v);

struct table {
    std::vector<std::string> titles; ///< column titles for text, md
    std::vector<std::string> keys;   ///< column keys for csv headers and json fields
    std::vector<bool> machine_only;  ///< shown in csv and json only (e.g. a CI's upper end)
    std::vector<std::vector<cell>> rows;
    std::string caption; ///< printed above the text and md renderings (e.g. shared parameters)
    /// Text and Markdown leave out the columns no row fills; CSV and JSON keep every column,
    /// so their columns never depend on the data.
    bool prune_for_people = false;
    /// Titles of the columns a text table too wide for the terminal leaves out before any
    /// other (table_fit.hpp), e.g. summary's p99, min and mean before its bandwidths.
    std::vector<std::string> fit_drop_first;

    void add_column(const std::string& title, const std::string& key, bool hidden = false) {
        titles.push_back(title);
        keys.push_back(key);
        machine_only.push_back(hidden);
    }
};

/// Render a table. JSON is an array of objects keyed by column keys.
std::string render(const table& t, output_format format);

/// The rows as JSON (array of objects).
nlohmann::json to_json(const table& t);

/// A CSV field: ringscale::csv_field (src/base/text_escape.hpp), one line whatever `s` holds.
using ringscale::csv_field;

/// `j` as JSON text (indented by `indent`), with any byte of a string that is not valid UTF-8
/// written as U+FFFD: text from a results file can never make the output fail.
std::string json_text(const nlohmann::json& j, int indent = 2);

} // namespace ringscale::analysis
