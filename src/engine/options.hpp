// Options, each declared once (in the spirit of nvbench's create.cuh): its type, range or
// allowed values, default, help and whether a comma list sweeps it. The CLI registers the
// declarations and --help shows them; the engine parses and checks every value against them
// before any planning (sweep.hpp), so a job's plan() only ever sees typed, checked values.
#pragma once

#include "src/engine/params.hpp"

#include <map>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// The type of an option's values.
enum class option_type {
    integer, ///< a whole number, std::int64_t
    size,    ///< a whole number >= 0 with optional K/M/G/T suffix (powers of 1024), uint64
    number,  ///< a finite real number, double
    choice,  ///< one of the declared values, text
    flag,    ///< on/off (1/0, yes/no, true/false), bool; alone on the command line: on
    text,    ///< any text
};

/// Named lists of another option's values (seq-preset's presets of seq-len).
using named_lists = std::map<std::string, std::vector<std::string>>;

/// One option. Build with the factories and chain the setters:
///   option_decl::size("seq-len", "4K").range(1, 1 << 30).sweeps().help("...")
struct option_decl {
    std::string name; ///< long name, e.g. "seq-len"
    option_type type = option_type::text;
    std::string default_value;  ///< text of the default; "" = absent unless given
    std::string implicit_value; ///< the value of the option given alone (--numerics: 200); ""
                                ///< = a value is required (flags: on)
    std::string help_text;      ///< one line, with units; --help appends values and range
    char short_name = 0;
    bool sweep = false;                 ///< a comma list runs one case per value
    double min_value = 0;               ///< integer, size, number: the smallest value allowed
    double max_value = 0;               ///< ... and the largest
    std::vector<std::string> values;    ///< choice: allowed values; flag: words besides on/off
    std::string lists_of;               ///< choice: each value names a list of this option's
    const named_lists* lists = nullptr; ///< ... values, replacing that option's own list

    static option_decl integer(std::string name, std::string default_value, double lo, double hi);
    static option_decl size(std::string name, std::string default_value, double lo, double hi);
    static option_decl number(std::string name, std::string default_value, double lo, double hi);
    static option_decl choice(std::string name, std::string default_value,
                              std::vector<std::string> allowed);
    static option_decl flag(std::string name, std::string default_value);
    static option_decl text(std::string name, std::string default_value);

    option_decl& help(std::string text) {
        help_text = std::move(text);
        return *this;
    }
    option_decl& sweeps() {
        sweep = true;
        return *this;
    }
    /// The value the option takes when given alone on the command line (--numerics: 200).
    option_decl& implicit(std::string value) {
        implicit_value = std::move(value);
        return *this;
    }
    option_decl& short_option(char c) {
        short_name = c;
        return *this;
    }
    /// flag: words accepted besides on/off, kept as text (--validate auto).
    option_decl& also(std::vector<std::string> words) {
        values = std::move(words);
        return *this;
    }
    /// choice: each value names a list of `option`'s values in `table`, which replaces
    /// `option`'s own list (--seq-preset medium: --seq-len 32K,49K,...). `table` must
    /// outlive the declaration.
    option_decl& names_lists_of(std::string option, const named_lists& table) {
        lists_of = std::move(option);
        lists = &table;
        return *this;
    }
};

/// Parse one value of `decl` and check it: its type, range, allowed values. config_error
/// with one line naming the option on anything else. Pure.
param_value parse_value(const option_decl& decl, const std::string& text);

/// What --help shows after the help text: the allowed values or the range, the default's
/// meaning and whether a list sweeps, e.g. "(1 to 1G; a list sweeps)". Pure.
std::string describe_values(const option_decl& decl);

/// The declaration called `name` in `decls`, or nullptr.
const option_decl* find_decl(const std::vector<option_decl>& decls, const std::string& name);

} // namespace ringscale::jobs
