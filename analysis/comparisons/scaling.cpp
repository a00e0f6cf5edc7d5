#include "scaling.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/descriptive.hpp"
#include "analysis/statistics/hierarchical.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ringscale::analysis {

namespace {
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// The case's iterations grouped by launch, or all in one group when launches are not the
/// unit of replication (then the two-level bootstrap is the iteration bootstrap).
launch_samples groups(const pooled_case& c, bool by_launch) {
    if (by_launch)
        return launch_steps(c.launches);
    return {c.steps()};
}

bool enough_launches(const pooled_case& c, const scaling_options& opt) {
    return c.launches.size() >= std::max<std::size_t>(2, opt.min_launches);
}

void set_interval(scaling_point& pt, const interval& t) {
    pt.time_lo = t.lo;
    pt.time_hi = t.hi;
}

/// Median time and its CI: two-level bootstrap over this case's launches when it has
/// enough (unless `ci_later`: the ratio replicates will give it), else the rank-based CI of
/// the iterations.
void set_time(scaling_point& pt, const pooled_case& c, const scaling_options& opt,
              std::uint64_t seed, bool ci_later) {
    std::vector<double> steps = c.steps();
    if (enough_launches(c, opt)) {
        pt.time = median_inplace(steps);
        if (ci_later)
            return;
        const interval t = percentile_interval(
            two_level_median_replicates(launch_steps(c.launches), opt.replicates, seed), opt.level);
        pt.time_lo = t.lo;
        pt.time_hi = t.hi;
        return;
    }
    std::sort(steps.begin(), steps.end());
    const estimate t = median_ci_sorted(steps, opt.level);
    pt.time = t.value;
    pt.time_lo = t.lo;
    pt.time_hi = t.hi;
}

} // namespace

double karp_flatt(double speedup, double p) {
    if (!(p > 1) || !(speedup > 0))
        return nan;
    return (1.0 / speedup - 1.0 / p) / (1.0 - 1.0 / p);
}

std::string scaling_refusal(const family& fam) {
    if (!fam.members.empty() && fam.members.front()->job == "collectives")
        return fmt::format("{}: no speedup, efficiency or Karp-Flatt (a collective moves a "
                           "message of the same size at every P: its time is not work divided "
                           "among ranks; busbw against P is its measure, see summary)",
                           fam.label);
    return "";
}

std::string karp_flatt_note(double e) {
    if (!std::isfinite(e) || (e >= 0 && e <= 1))
        return "";
    if (e < 0)
        return fmt::format("Karp-Flatt {:.3g} < 0: superlinear speedup, not a serial fraction "
                           "(check the base case's cores and cache effects)",
                           e);
    return fmt::format("Karp-Flatt {:.3g} > 1: slower than at the base P, not a serial fraction",
                       e);
}

std::optional<scaling_result> analyse_scaling(const family& fam, const scaling_options& opt) {
    if (fam.members.size() < 2)
        return std::nullopt;
    const int base_p = opt.base_p.value_or(fam.members.front()->world_size);
    auto base_it = std::find_if(fam.members.begin(), fam.members.end(),
                                [&](const pooled_case* c) { return c->world_size == base_p; });
    if (base_it == fam.members.end())
        return std::nullopt;
    const pooled_case& base = **base_it;
    const bool weak = fam.scaling == "weak";
    scaling_result r{fam.label, fam.scaling, base_p, 0, nan, {}};
    std::vector<double> base_steps = base.steps();
    r.base_time = median_inplace(base_steps);
    std::vector<double> kf;
    for (std::size_t i = 0; i < fam.members.size(); ++i) {
        const pooled_case& c = *fam.members[i];
        scaling_point pt;
        pt.source = &c;
        pt.p = c.world_size;
        pt.launches = c.launches.size();
        const bool by_launch = enough_launches(base, opt) && enough_launches(c, opt);
        pt.resampled = by_launch ? "launches" : "iterations";
        const auto seed = opt.seed + i;
        set_time(pt, c, opt, seed, by_launch && &c != &base);
        const double rel_p = static_cast<double>(pt.p) / base_p;
        auto eff = [&](double tb, double tp) { return weak ? tb / tp : tb / (rel_p * tp); };
        auto spd = [&](double tb, double tp) { return weak ? rel_p * tb / tp : tb / tp; };
        pt.speedup = spd(r.base_time, pt.time);
        pt.efficiency = eff(r.base_time, pt.time);
        if (&c == &base) {
            pt.speedup_lo = pt.speedup_hi = pt.efficiency_lo = pt.efficiency_hi = 1.0;
        } else {
            // One set of replicate pairs gives the speedup, the efficiency and (resampling
            // launches) this case's time CI: one pass over the data instead of three.
            const median_pairs m = two_level_median_pairs(
                groups(base, by_launch), groups(c, by_launch), opt.replicates, seed);
            const interval s = percentile_interval(combine_pairs(m, spd), opt.level);
            const interval e = percentile_interval(combine_pairs(m, eff), opt.level);
            pt.speedup_lo = s.lo;
            pt.speedup_hi = s.hi;
            pt.efficiency_lo = e.lo;
            pt.efficiency_hi = e.hi;
            if (by_launch)
                set_interval(pt, percentile_interval(m.b, opt.level));
        }
        pt.karp_flatt = weak ? nan : karp_flatt(pt.speedup, rel_p);
        pt.karp_flatt_note = karp_flatt_note(pt.karp_flatt);
        if (std::isfinite(pt.karp_flatt))
            kf.push_back(pt.karp_flatt);
        r.points.push_back(pt);
    }
    if (!kf.empty())
        r.serial_fraction = std::clamp(median_inplace(kf), 0.0, 1.0);
    return r;
}

} // namespace ringscale::analysis
