#include "compare.hpp"

#include "bootstrap.hpp"
#include "src/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace ringscale::analysis {

namespace {

/// Parameters (and P) that differ between two cases of the same job and variant.
std::vector<std::string> differences(const pooled_case& a, const pooled_case& b) {
    std::vector<std::string> out;
    if (a.world_size != b.world_size)
        out.push_back(fmt::format("P ({} vs {})", a.world_size, b.world_size));
    std::map<std::string, std::pair<std::string, std::string>> all;
    for (const auto& [k, v] : a.params)
        all[k].first = v;
    for (const auto& [k, v] : b.params)
        all[k].second = v;
    for (const auto& [k, vs] : all)
        if (vs.first != vs.second)
            out.push_back(fmt::format("{} ({} vs {})", k, vs.first.empty() ? "-" : vs.first,
                                      vs.second.empty() ? "-" : vs.second));
    return out;
}

[[noreturn]] void no_match(const std::vector<pooled_case>& base,
                           const std::vector<pooled_case>& next) {
    if (base.empty() || next.empty())
        throw config_error(
            fmt::format("nothing to compare: {} has no cases", base.empty() ? "BASE" : "NEW"));
    const pooled_case* best_a = nullptr;
    const pooled_case* best_b = nullptr;
    std::size_t best = SIZE_MAX;
    for (const auto& a : base)
        for (const auto& b : next)
            if (a.job == b.job && a.variant == b.variant && differences(a, b).size() < best) {
                best = differences(a, b).size();
                best_a = &a;
                best_b = &b;
            }
    if (!best_a)
        throw config_error("no case of NEW matches BASE: no common job and variant");
    throw config_error(fmt::format("no case of NEW matches BASE: closest pair {} differs in {}",
                                   best_a->label(),
                                   fmt::join(differences(*best_a, *best_b), ", ")));
}

} // namespace

const char* to_string(verdict v) {
    switch (v) {
    case verdict::regression:
        return "regression";
    case verdict::improvement:
        return "improvement";
    case verdict::unchanged:
        return "within threshold";
    case verdict::not_significant:
        return "no significant change";
    }
    return "?";
}

bool comparison::any_regression() const {
    return std::any_of(matched.begin(), matched.end(),
                       [](const case_comparison& c) { return c.result == verdict::regression; });
}

comparison compare_sets(const std::vector<pooled_case>& base, const std::vector<pooled_case>& next,
                        const compare_options& opt) {
    comparison out;
    std::map<std::string, const pooled_case*> new_by_key;
    for (const auto& c : next)
        if (!c.launches.empty())
            new_by_key[c.key] = &c;
    for (const auto& b : base) {
        if (b.launches.empty())
            continue;
        auto it = new_by_key.find(b.key);
        if (it == new_by_key.end()) {
            out.only_base.push_back(&b);
            continue;
        }
        case_comparison cc;
        cc.base = &b;
        cc.next = it->second;
        new_by_key.erase(it);
        const bool by_launch = cc.base->launches.size() >= opt.min_launches &&
                               cc.next->launches.size() >= opt.min_launches;
        cc.unit = by_launch ? "launches" : "iterations";
        const auto x = by_launch ? cc.next->launch_medians() : cc.next->steps();
        const auto y = by_launch ? cc.base->launch_medians() : cc.base->steps();
        cc.n_new = x.size();
        cc.n_base = y.size();
        auto med = [](std::vector<double> v) { return median_inplace(v); };
        cc.base_median = med(cc.base->steps());
        cc.new_median = med(cc.next->steps());
        cc.change = cc.new_median / cc.base_median - 1.0;
        cc.test = mann_whitney(x, y);
        out.matched.push_back(cc);
    }
    for (const auto& [k, c] : new_by_key)
        out.only_new.push_back(c);
    if (out.matched.empty())
        no_match(base, next);
    std::vector<double> p;
    for (const auto& c : out.matched)
        p.push_back(c.test.p_value);
    const auto adjusted = holm_adjust(p);
    for (std::size_t i = 0; i < out.matched.size(); ++i) {
        case_comparison& c = out.matched[i];
        c.p_adjusted = adjusted[i];
        const bool significant = c.p_adjusted < opt.alpha;
        if (!significant)
            c.result = verdict::not_significant;
        else if (c.change > opt.threshold)
            c.result = verdict::regression;
        else if (c.change < -opt.threshold)
            c.result = verdict::improvement;
        else
            c.result = verdict::unchanged;
    }
    return out;
}

} // namespace ringscale::analysis
