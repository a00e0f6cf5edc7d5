#include "src/engine/params.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::jobs {

const std::string& params::text(const std::string& name) const {
    auto it = m_values.find(name);
    if (it == m_values.end())
        throw config_error(fmt::format("--{} is required", name));
    return it->second;
}

std::int64_t params::integer(const std::string& name) const {
    return parse_int(text(name), name);
}

std::uint64_t params::size(const std::string& name) const {
    return parse_size(text(name), name);
}

std::uint64_t params::positive_size(const std::string& name) const {
    const std::uint64_t v = size(name);
    if (v == 0)
        throw config_error(fmt::format("--{}: must be greater than zero", name));
    return v;
}

double params::number(const std::string& name) const {
    return parse_double(text(name), name);
}

bool params::flag(const std::string& name) const {
    return parse_bool(text(name), name);
}

const std::string& params::choice(const std::string& name,
                                  const std::vector<std::string>& choices) const {
    const std::string& v = text(name);
    if (std::find(choices.begin(), choices.end(), v) == choices.end())
        throw config_error(
            fmt::format("--{}: '{}' is not one of {}", name, v, fmt::join(choices, ", ")));
    return v;
}

std::vector<params> expand_product(const param_lists& lists,
                                   const std::vector<std::string>& names) {
    std::map<std::string, std::string> base;
    for (const auto& [name, values] : lists)
        if (!values.empty())
            base[name] = values.front();
    std::vector<params> cases{params(base)};
    for (const auto& name : names) {
        auto it = lists.find(name);
        if (it == lists.end() || it->second.size() <= 1)
            continue;
        std::vector<params> next;
        for (const auto& c : cases)
            for (const auto& v : it->second) {
                params p = c;
                p.set(name, v);
                next.push_back(std::move(p));
            }
        cases = std::move(next);
    }
    return cases;
}

const std::string& single_value(const param_lists& lists, const std::string& name) {
    auto it = lists.find(name);
    if (it == lists.end() || it->second.empty())
        throw config_error(fmt::format("--{} is required", name));
    if (it->second.size() > 1)
        throw config_error(fmt::format("--{}: takes one value, not a list", name));
    return it->second.front();
}

double attr_number(const attr_map& attrs, const std::string& name) {
    auto it = attrs.find(name);
    if (it == attrs.end())
        return 0;
    if (auto* d = std::get_if<double>(&it->second))
        return *d;
    if (auto* i = std::get_if<std::int64_t>(&it->second))
        return static_cast<double>(*i);
    return 0;
}

} // namespace ringscale::jobs
