#include "src/engine/params.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace ringscale::jobs {

namespace {

[[noreturn]] void wrong_type(const std::string& name, const char* wanted) {
    throw std::logic_error(fmt::format("parameter '{}' is not {}", name, wanted));
}

} // namespace

param_value text_value(const std::string& text) {
    return {text, text, ""};
}

param_value integer_value(std::int64_t v) {
    return {std::to_string(v), v, ""};
}

param_value size_value(std::uint64_t v) {
    return {std::to_string(v), v, ""};
}

param_value flag_value(bool v) {
    return {v ? "1" : "0", v, ""};
}

const param_value& params::get(const std::string& name) const {
    auto it = m_values.find(name);
    if (it == m_values.end())
        throw config_error(fmt::format("--{} is required", name));
    return it->second;
}

std::int64_t params::integer(const std::string& name) const {
    const auto& v = get(name).value;
    if (const auto* i = std::get_if<std::int64_t>(&v))
        return *i;
    const auto* u = std::get_if<std::uint64_t>(&v);
    if (!u || *u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        wrong_type(name, "an integer");
    return static_cast<std::int64_t>(*u);
}

std::uint64_t params::size(const std::string& name) const {
    const auto& v = get(name).value;
    if (const auto* u = std::get_if<std::uint64_t>(&v))
        return *u;
    const auto* i = std::get_if<std::int64_t>(&v);
    if (!i || *i < 0)
        wrong_type(name, "a size");
    return static_cast<std::uint64_t>(*i);
}

double params::number(const std::string& name) const {
    const auto& v = get(name).value;
    if (const auto* d = std::get_if<double>(&v))
        return *d;
    if (const auto* i = std::get_if<std::int64_t>(&v))
        return static_cast<double>(*i);
    if (const auto* u = std::get_if<std::uint64_t>(&v))
        return static_cast<double>(*u);
    wrong_type(name, "a number");
}

bool params::flag(const std::string& name) const {
    const auto* b = std::get_if<bool>(&get(name).value);
    if (!b)
        wrong_type(name, "on/off");
    return *b;
}

params params::only(const std::vector<std::string>& names) const {
    params out;
    for (const auto& name : names)
        if (auto it = m_values.find(name); it != m_values.end())
            out.m_values.insert(*it);
    return out;
}

double attr_number(const attr_map& attrs, const std::string& name) {
    auto it = attrs.find(name);
    return it == attrs.end() ? 0 : results::attr_number(it->second).value_or(0);
}

} // namespace ringscale::jobs
