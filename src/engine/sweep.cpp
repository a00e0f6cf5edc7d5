#include "src/engine/sweep.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>
#include <limits>
#include <utility>

namespace ringscale::jobs {

namespace {

using typed_lists = std::vector<std::pair<std::string, std::vector<param_value>>>;

/// The user's texts for `d`: the list given, else the default; empty when absent.
std::vector<std::string> texts_of(const option_decl& d, const param_lists& lists) {
    const auto it = lists.find(d.name);
    if (it != lists.end() && !(it->second.size() == 1 && it->second.front().empty()))
        return it->second;
    if (d.default_value.empty())
        return {};
    return {d.default_value};
}

/// Replace an option that names lists (seq-preset) by the values of the lists it names,
/// parsed as the option they are lists of.
void replace_named_lists(const std::vector<option_decl>& decls, typed_lists& typed) {
    for (std::size_t i = 0; i < typed.size(); ++i) {
        const option_decl* d = find_decl(decls, typed[i].first);
        if (!d || d->lists_of.empty() || !d->lists)
            continue;
        const option_decl* target = find_decl(decls, d->lists_of);
        if (!target)
            throw std::logic_error(fmt::format("--{}: no option --{}", d->name, d->lists_of));
        std::vector<param_value> values;
        for (const param_value& name : typed[i].second)
            for (const std::string& text : d->lists->at(name.text)) {
                values.push_back(parse_value(*target, text));
                values.back().from_list = d->name;
            }
        bool replaced = false;
        for (auto& [n, v] : typed)
            if (n == target->name) {
                v = values;
                replaced = true;
            }
        if (!replaced) { // the option has no default and was not given: it takes this place
            typed[i] = {target->name, std::move(values)};
            continue;
        }
        typed.erase(typed.begin() + static_cast<std::ptrdiff_t>(i));
        --i; // wraps at 0; the loop's ++i brings it back
    }
}

/// a * b, or UINT64_MAX when it overflows.
std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b
               ? std::numeric_limits<std::uint64_t>::max()
               : a * b;
}

} // namespace

void check_case_count(std::uint64_t cases, std::uint64_t repeats) {
    const std::uint64_t n = saturating_product(cases, repeats);
    if (n <= max_cases_per_launch)
        return;
    const std::string count = n == std::numeric_limits<std::uint64_t>::max()
                                  ? std::string("more than 18446744073709551615")
                                  : std::to_string(n);
    throw config_error(fmt::format("the sweep plans {} cases{}; one launch plans at most {}: "
                                   "shorten the lists or split them over several launches",
                                   count, repeats > 1 ? " with --repeat" : "",
                                   max_cases_per_launch));
}

namespace {

/// Every option's values, parsed and checked, named lists replaced, the product counted.
typed_lists typed_values(const std::vector<option_decl>& decls, const param_lists& lists) {
    typed_lists typed;
    for (const option_decl& d : decls) {
        const std::vector<std::string> texts = texts_of(d, lists);
        if (texts.empty())
            continue;
        if (!d.sweep && texts.size() > 1)
            throw config_error(fmt::format("--{}: takes one value, not a list", d.name));
        std::vector<param_value> values;
        for (const std::string& t : texts)
            values.push_back(parse_value(d, t));
        typed.emplace_back(d.name, std::move(values));
    }
    replace_named_lists(decls, typed);
    std::uint64_t count = 1;
    for (const auto& [name, values] : typed)
        count = saturating_product(count, values.size());
    check_case_count(count, 1);
    return typed;
}

} // namespace

std::uint64_t check_sweep(const std::vector<option_decl>& decls, const param_lists& lists) {
    std::uint64_t count = 1;
    for (const auto& [name, values] : typed_values(decls, lists))
        count *= values.size(); // at most max_cases_per_launch: checked
    return count;
}

std::vector<params> expand_sweep(const std::vector<option_decl>& decls, const param_lists& lists) {
    std::vector<params> points(1);
    for (const auto& [name, values] : typed_values(decls, lists)) {
        std::vector<params> next;
        next.reserve(points.size() * values.size());
        for (const params& p : points)
            for (const param_value& v : values) {
                next.push_back(p);
                next.back().set(name, v);
            }
        points = std::move(next);
    }
    return points;
}

std::vector<case_plan> plan_job(const job& j, const param_lists& lists, const launch_info& launch) {
    std::vector<case_plan> cases = j.plan(expand_sweep(j.options(), lists), launch);
    check_case_count(cases.size(), 1);
    return cases;
}

} // namespace ringscale::jobs
