// Job parameters as the user typed them: every value is text, a comma list is a sweep.
// `params` is one case's resolved values with typed, error-naming getters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace ringscale::jobs {

/// An option a job accepts; registered with the CLI, documented by --help.
struct option_spec {
    std::string name;          ///< long name, e.g. "seq-len"
    std::string default_value; ///< text of the default; empty = no default
    std::string help;          ///< one line, with units
    bool is_flag = false;      ///< "--causal" alone means "1"
    char short_name = 0;
};

/// Every parameter of a launch: name -> list of values (one value = no sweep).
using param_lists = std::map<std::string, std::vector<std::string>>;

/// A typed attribute value written to the results file.
using attr_value = std::variant<std::string, std::int64_t, double>;
using attr_map = std::map<std::string, attr_value>;

/// One case's parameters: name -> single value.
class params {
  public:
    params() = default;
    explicit params(std::map<std::string, std::string> values) : m_values(std::move(values)) {}

    bool has(const std::string& name) const { return m_values.count(name) > 0; }
    void set(const std::string& name, const std::string& value) { m_values[name] = value; }
    /// The raw text; config_error when missing.
    const std::string& text(const std::string& name) const;
    std::int64_t integer(const std::string& name) const;
    /// Whole number > 0 (sizes accept K/M/G suffixes).
    std::uint64_t positive_size(const std::string& name) const;
    std::uint64_t size(const std::string& name) const;
    double number(const std::string& name) const;
    bool flag(const std::string& name) const;
    /// The value, which must be one of `choices`; config_error listing them otherwise.
    const std::string& choice(const std::string& name,
                              const std::vector<std::string>& choices) const;
    const std::map<std::string, std::string>& values() const { return m_values; }

  private:
    std::map<std::string, std::string> m_values;
};

/// The cartesian product of the listed parameters (first name varies slowest); every
/// other parameter keeps its first value. Names absent from `lists` are ignored.
std::vector<params> expand_product(const param_lists& lists, const std::vector<std::string>& names);

/// The single value of `name`; config_error if the user gave a list where one value is needed.
const std::string& single_value(const param_lists& lists, const std::string& name);

/// Value of a numeric attribute as double (0 when absent).
double attr_number(const attr_map& attrs, const std::string& name);

} // namespace ringscale::jobs
