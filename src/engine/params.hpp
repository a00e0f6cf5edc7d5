// Job parameters. The user's text (a comma list where an option sweeps) is `param_lists`;
// the engine parses and checks it against the options' declarations (options.hpp) and hands
// each job typed values: `params` is one point of the sweep, or one planned case's values.
#pragma once

#include "src/base/case_record.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace ringscale::jobs {

/// Every parameter of a launch as the user typed it: name -> list of values.
using param_lists = std::map<std::string, std::vector<std::string>>;

/// A typed attribute value written to the results file (src/base/case_record.hpp).
using results::attr_map;
using results::attr_value;

/// One typed value: what the user wrote (or the job set), and what it means.
struct param_value {
    /// As written ("4K", "on"; a number option's in canonical form, "0x0.8p0" as "0.5"): the
    /// case identity records this text.
    std::string text;
    std::variant<std::string, std::int64_t, std::uint64_t, double, bool> value;
    /// The option whose named list gave this value ("seq-preset"); "" when typed directly.
    std::string from_list;

    bool operator==(const param_value& o) const {
        return text == o.text && value == o.value && from_list == o.from_list;
    }
    bool operator!=(const param_value& o) const { return !(*this == o); }
};

/// A value the job computes while planning (text written in full: "16384", "1", "fp32").
param_value text_value(const std::string& text);
param_value integer_value(std::int64_t v);
param_value size_value(std::uint64_t v);
param_value flag_value(bool v);

/// One point of a sweep, or one case's parameters: name -> typed value. The getters return
/// what the engine parsed; asking for another type is a programming error (std::logic_error).
class params {
  public:
    bool has(const std::string& name) const { return m_values.count(name) > 0; }
    void set(const std::string& name, param_value v) { m_values[name] = std::move(v); }
    /// The value; config_error "--name is required" when missing.
    const param_value& get(const std::string& name) const;
    /// The text as written.
    const std::string& text(const std::string& name) const { return get(name).text; }
    /// An integer or a size that fits.
    std::int64_t integer(const std::string& name) const;
    /// A size (K/M/G suffixes) or a non-negative integer.
    std::uint64_t size(const std::string& name) const;
    /// Any number.
    double number(const std::string& name) const;
    bool flag(const std::string& name) const;
    /// Only `names` (those present), e.g. the options that make a job's case identity.
    params only(const std::vector<std::string>& names) const;
    const std::map<std::string, param_value>& values() const { return m_values; }

  private:
    std::map<std::string, param_value> m_values;
};

/// Value of a numeric attribute as double (0 when absent or text).
double attr_number(const attr_map& attrs, const std::string& name);

} // namespace ringscale::jobs
