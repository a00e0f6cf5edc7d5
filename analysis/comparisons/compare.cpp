#include "compare.hpp"

#include "analysis/cases/case_decision.hpp"
#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/hierarchical.hpp"
#include "analysis/statistics/launch_test.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <cmath>
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
    case verdict::not_decided:
        return "not decided";
    case verdict::contended:
        return "not decided (every launch marked)";
    }
    return "?";
}

bool comparison::any_regression() const {
    return std::any_of(matched.begin(), matched.end(),
                       [](const case_comparison& c) { return c.result == verdict::regression; });
}

std::size_t comparison::undecided() const {
    return static_cast<std::size_t>(
        std::count_if(matched.begin(), matched.end(), [](const case_comparison& c) {
            return c.result == verdict::not_decided || c.result == verdict::contended;
        }));
}

std::size_t comparison::iteration_level() const {
    return static_cast<std::size_t>(
        std::count_if(matched.begin(), matched.end(),
                      [](const case_comparison& c) { return c.unit == "iterations"; }));
}

namespace {

/// Medians, launch counts and the iteration-level test of one matched pair.
case_comparison describe_pair(const pooled_case& b, const pooled_case& n,
                              const compare_options& opt) {
    case_comparison cc;
    cc.base = &b;
    cc.next = &n;
    const launch_samples base = launch_steps(b.launches);
    const launch_samples next = launch_steps(n.launches);
    cc.launches_base = base.size();
    cc.launches_new = next.size();
    const std::size_t need = std::max<std::size_t>(2, opt.min_launches);
    const bool by_launch = base.size() >= need && next.size() >= need;
    cc.unit = by_launch ? "launches" : "iterations";
    cc.base_median = pooled_median(base);
    cc.new_median = pooled_median(next);
    cc.change = cc.new_median / cc.base_median - 1.0;
    const auto x = n.steps();
    const auto y = b.steps();
    cc.n_base = by_launch ? base.size() : y.size();
    cc.n_new = by_launch ? next.size() : x.size();
    cc.test = mann_whitney(x, y);
    return cc;
}

/// CI of the change from the two-level bootstrap; with enough launches on both sides its
/// p-value decides, otherwise the iteration-level test's (reported, never a regression).
void resample_pair(case_comparison& cc, std::size_t replicates, std::uint64_t seed,
                   const compare_options& opt, std::size_t cases) {
    const launch_samples base = launch_steps(cc.base->launches);
    const launch_samples next = launch_steps(cc.next->launches);
    const auto ratio = [](double nw, double bs) { return nw / bs; };
    const std::vector<double> reps = two_level_replicates(next, base, ratio, replicates, seed);
    const interval ci = percentile_interval(reps, opt.level);
    cc.change_lo = ci.lo - 1.0;
    cc.change_hi = ci.hi - 1.0;
    // With launches as the unit both the two-level bootstrap and Welch's test on the launch
    // medians must reject (analysis/statistics/launch_test.hpp: the bootstrap alone is too narrow
    // for a handful of launches).
    cc.p_value = cc.unit == "launches"
                     ? std::max(bootstrap_p_value(reps, 1.0), welch_log_median_p(next, base))
                     : cc.test.p_value;
    if (cc.unit == "launches") {
        cc.launch_noise = std::max(launch_log_sd(next), launch_log_sd(base));
        cc.detectable =
            detectable_change(next, base, opt.alpha / static_cast<double>(cases), detect_power);
    }
}

/// The one decision rule on the pair, with Holm's p as a guard across the cases.
void decide_pair(case_comparison& c, const compare_options& opt) {
    if (c.base->launches.empty() || c.next->launches.empty()) {
        c.result = verdict::contended;
        return;
    }
    const std::size_t need = std::max<std::size_t>(2, opt.min_launches);
    const decision_result d =
        decide_cases(*c.base, *c.next, {1 + c.change_lo, 1 + c.change_hi}, opt.threshold);
    c.note = d.note;
    c.reason = d.reason;
    if (d.verdict == decision::not_decided) {
        c.result = verdict::not_decided;
    } else if (c.unit != "launches") { // fewer launches than --min-launches asks
        c.result = verdict::not_decided;
        c.reason = fmt::format("fewer than {} launches", need);
    } else if (d.verdict == decision::tie) {
        c.result = verdict::unchanged;
    } else if (!(c.p_adjusted < opt.alpha)) {
        c.result = verdict::not_decided;
        c.reason = fmt::format("not significant: p {:.3g}, Holm {:.3g}", c.p_value, c.p_adjusted);
    } else {
        c.result = d.verdict == decision::slower ? verdict::regression : verdict::improvement;
    }
}

} // namespace

comparison compare_sets(const std::vector<pooled_case>& base, const std::vector<pooled_case>& next,
                        const compare_options& opt) {
    comparison out;
    std::map<std::string, const pooled_case*> new_by_key;
    for (const auto& c : next)
        if (!c.launches.empty())
            new_by_key[c.key] = &c;
    std::vector<std::pair<const pooled_case*, const pooled_case*>> pairs;
    for (const auto& b : base) {
        if (b.launches.empty())
            continue;
        auto it = new_by_key.find(b.key);
        if (it == new_by_key.end()) {
            out.only_base.push_back(&b);
            continue;
        }
        pairs.emplace_back(&b, it->second);
        new_by_key.erase(it);
    }
    // Each matched side as compared (--skip-marked: without its marked launches), kept where
    // the comparison points.
    out.unmarked = std::make_shared<std::vector<pooled_case>>();
    out.unmarked->reserve(2 * pairs.size());
    for (const auto& [b, n] : pairs) {
        out.unmarked->push_back(opt.skip_marked ? without_marked(*b) : *b);
        out.unmarked->push_back(opt.skip_marked ? without_marked(*n) : *n);
        const pooled_case& cb = (*out.unmarked)[out.unmarked->size() - 2];
        const pooled_case& cn = out.unmarked->back();
        case_comparison cc;
        if (!cb.launches.empty() && !cn.launches.empty())
            cc = describe_pair(cb, cn, opt);
        cc.base = &cb;
        cc.next = &cn;
        cc.base_all = b;
        cc.next_all = n;
        cc.marked_base = b->launches.size() - without_marked(*b).launches.size();
        cc.marked_new = n->launches.size() - without_marked(*n).launches.size();
        if (cc.marked_base + cc.marked_new > 0) {
            const std::string mb = marks_text(*b, true), mn = marks_text(*n, true);
            cc.marked_why = mn.empty() ? "BASE " + mb : "NEW " + mn;
        }
        if (cb.launches.empty() || cn.launches.empty()) { // shown, never decided
            cc.base_median = pooled_median(launch_steps(b->launches));
            cc.new_median = pooled_median(launch_steps(n->launches));
            cc.change = cc.new_median / cc.base_median - 1.0;
            cc.unit = "none";
        }
        out.matched.push_back(cc);
    }
    for (const auto& [k, c] : new_by_key)
        out.only_new.push_back(c);
    if (out.matched.empty())
        no_match(base, next);
    const std::size_t replicates = replicates_for(opt.replicates, out.matched.size(), opt.alpha);
    std::vector<double> p;
    for (std::size_t i = 0; i < out.matched.size(); ++i) {
        if (out.matched[i].unit != "none")
            resample_pair(out.matched[i], replicates, opt.seed + i, opt, out.matched.size());
        p.push_back(out.matched[i].p_value);
    }
    const auto adjusted = holm_adjust(p);
    for (std::size_t i = 0; i < out.matched.size(); ++i) {
        out.matched[i].p_adjusted = adjusted[i];
        decide_pair(out.matched[i], opt);
    }
    return out;
}

int compare_exit_code(const comparison& cmp, bool fail_on) {
    if (cmp.any_regression())
        return exit_regression;
    return fail_on && cmp.undecided() > 0 ? exit_not_decided : 0;
}

std::string detectability_note(const comparison& cmp, double threshold, double alpha) {
    const case_comparison* worst = nullptr;
    for (const case_comparison& c : cmp.matched)
        if (std::isfinite(c.detectable) && (!worst || c.detectable > worst->detectable))
            worst = &c;
    if (!worst)
        return {};
    std::string line = fmt::format(
        "with these launches a change is detected with {:g}% power above {:.1f}% in every case "
        "(largest for {} P={}: launch-to-launch noise {:.1f}%)",
        100 * detect_power, 100 * worst->detectable, worst->base->label(), worst->base->world_size,
        100 * worst->launch_noise);
    const double target = 2 * threshold;
    if (target > 0 && worst->detectable > target) {
        const std::size_t need = launches_needed(
            launch_steps(worst->next->launches), launch_steps(worst->base->launches), target,
            alpha / static_cast<double>(cmp.matched.size()), detect_power);
        line += need > 1000 ? fmt::format("; over 1000 launches per side would detect {:g}% there",
                                          100 * target)
                            : fmt::format("; about {} launches per side would detect {:g}% there",
                                          need, 100 * target);
    }
    return line;
}

} // namespace ringscale::analysis
