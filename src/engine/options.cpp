#include "src/engine/options.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::jobs {

namespace {

option_decl make(std::string name, option_type type, std::string default_value) {
    option_decl d;
    d.name = std::move(name);
    d.type = type;
    d.default_value = std::move(default_value);
    return d;
}

std::string bound_text(const option_decl& d, double v) {
    if (d.type == option_type::size)
        return format_size(static_cast<std::uint64_t>(v));
    if (d.type == option_type::integer)
        return fmt::format("{:.0f}", v);
    return fmt::format("{:g}", v);
}

std::string range_text(const option_decl& d) {
    return fmt::format("{} to {}", bound_text(d, d.min_value), bound_text(d, d.max_value));
}

void check_range(const option_decl& d, const std::string& text, double v) {
    if (v < d.min_value || v > d.max_value)
        throw config_error(
            fmt::format("--{}: {} is out of range ({})", d.name, text, range_text(d)));
}

bool allowed(const std::vector<std::string>& values, const std::string& v) {
    return std::find(values.begin(), values.end(), v) != values.end();
}

} // namespace

option_decl option_decl::integer(std::string name, std::string default_value, double lo,
                                 double hi) {
    option_decl d = make(std::move(name), option_type::integer, std::move(default_value));
    d.min_value = lo;
    d.max_value = hi;
    return d;
}

option_decl option_decl::size(std::string name, std::string default_value, double lo, double hi) {
    option_decl d = integer(std::move(name), std::move(default_value), lo, hi);
    d.type = option_type::size;
    return d;
}

option_decl option_decl::number(std::string name, std::string default_value, double lo, double hi) {
    option_decl d = integer(std::move(name), std::move(default_value), lo, hi);
    d.type = option_type::number;
    return d;
}

option_decl option_decl::choice(std::string name, std::string default_value,
                                std::vector<std::string> allowed) {
    option_decl d = make(std::move(name), option_type::choice, std::move(default_value));
    d.values = std::move(allowed);
    return d;
}

option_decl option_decl::flag(std::string name, std::string default_value) {
    return make(std::move(name), option_type::flag, std::move(default_value));
}

option_decl option_decl::text(std::string name, std::string default_value) {
    return make(std::move(name), option_type::text, std::move(default_value));
}

param_value parse_value(const option_decl& d, const std::string& text) {
    param_value out{text, text, ""};
    switch (d.type) {
    case option_type::integer: {
        const std::int64_t v = parse_int(text, d.name);
        check_range(d, text, static_cast<double>(v));
        out.value = v;
        break;
    }
    case option_type::size: {
        const std::uint64_t v = parse_size(text, d.name);
        check_range(d, text, static_cast<double>(v));
        out.value = v;
        break;
    }
    case option_type::number: {
        const double v = parse_double(text, d.name) + 0.0; // -0 is 0
        check_range(d, text, v);
        out.value = v;
        // Canonical text (the shortest that reads back as v): 0x0.8p0, 0.50 and 5e-1 are the
        // one case 0.5 in the identity, and 1e-400 (below the smallest double) is 0.
        out.text = fmt::format("{}", v);
        break;
    }
    case option_type::choice:
        if (!allowed(d.values, text))
            throw config_error(fmt::format("--{}: '{}' is not one of {}", d.name, text,
                                           fmt::join(d.values, ", ")));
        break;
    case option_type::flag:
        if (!allowed(d.values, text))
            out.value = parse_bool(text, d.name);
        break;
    case option_type::text:
        break;
    }
    return out;
}

std::string describe_values(const option_decl& d) {
    std::string what;
    switch (d.type) {
    case option_type::integer:
    case option_type::size:
    case option_type::number:
        what = range_text(d);
        break;
    case option_type::choice:
        what = fmt::format("{}", fmt::join(d.values, "|"));
        if (!d.lists_of.empty() && d.lists) { // what each name holds: "document: 512,1K,2K,4K"
            std::vector<std::string> named;
            for (const std::string& v : d.values) {
                const auto it = d.lists->find(v);
                named.push_back(it == d.lists->end()
                                    ? v
                                    : fmt::format("{}: {}", v, fmt::join(it->second, ",")));
            }
            what = fmt::format("{}; each a list of --{}", fmt::join(named, " | "), d.lists_of);
        } else if (!d.lists_of.empty()) {
            what += fmt::format(", each a list of --{}", d.lists_of);
        }
        break;
    case option_type::flag:
        what = d.values.empty() ? "on|off" : fmt::format("on|off|{}", fmt::join(d.values, "|"));
        break;
    case option_type::text:
        break;
    }
    if (!d.implicit_value.empty())
        what += fmt::format("{}alone: {}", what.empty() ? "" : "; ", d.implicit_value);
    if (d.sweep)
        what += what.empty() ? "a list sweeps" : "; a list sweeps";
    return what.empty() ? "" : "(" + what + ")";
}

const option_decl* find_decl(const std::vector<option_decl>& decls, const std::string& name) {
    for (const auto& d : decls)
        if (d.name == name)
            return &d;
    return nullptr;
}

} // namespace ringscale::jobs
