// A mark's effect (machine_marks.hpp, mark_effect): what each rule that marks a case can
// change, estimated from the case's own machine fields. DESIGN.md ("Machine state") gives
// the estimates and why.
#include "machine_marks.hpp"

#include "results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ringscale::machine {

namespace ds = schema::machine_ds;

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double max_wait = 0.9; // a rank's share of time waiting, for the estimate

double field(const machine_fields& m, const char* name, std::size_t rank) {
    const auto it = m.find(name);
    return it != m.end() && rank < it->second.size() ? it->second[rank] : nan;
}

mark_effect effect(double lo, double factor, double hi, std::string reason) {
    mark_effect e;
    e.lo = std::max(1.0, lo);
    e.factor = std::max(e.lo, factor);
    e.hi = std::max(e.factor, hi);
    e.reason = std::move(reason);
    return e;
}

// The effects of one rank's figures, one per rule that marks it (index: the rule).
enum rule { r_oversubscribed, r_foreign, r_wait, r_steal, r_gpu_shared, r_gpu_throttle, n_rules };

void rank_effects(const machine_fields& m, std::size_t r, std::vector<mark_effect>& worst,
                  std::vector<bool>& found) {
    const double foreign = field(m, ds::foreign_load, r), res0 = field(m, ds::load_resolution, r);
    const double cores = field(m, ds::load_cores, r), own = field(m, ds::own_threads, r);
    const double wait = field(m, ds::run_wait, r), steal = field(m, ds::steal, r);
    const double others = field(m, ds::gpu_other_processes, r);
    const double thr = field(m, ds::gpu_throttle, r);
    const double res = std::isfinite(res0) ? res0 : 0.0;
    const double t = std::isfinite(own) && own >= 1 ? own : 1.0;
    const double c = std::isfinite(cores) && cores >= 1 ? cores : nan;
    auto keep = [&](rule k, mark_effect e) {
        auto& w = worst[static_cast<std::size_t>(k)];
        if (!found[static_cast<std::size_t>(k)] || e.hi > w.hi ||
            (e.hi == w.hi && e.factor > w.factor))
            w = std::move(e);
        found[static_cast<std::size_t>(k)] = true;
    };
    const bool over = std::isfinite(own) && std::isfinite(c) && own > c;
    if (over)
        keep(r_oversubscribed, effect(1, own / c, own / c, oversubscribed_text(own, c)));
    if (std::isfinite(foreign) && foreign - res >= contention_cores) {
        const double f = std::isfinite(c) ? std::max(1.0, (t + foreign) / c) : 1 + foreign;
        const double lo = std::isfinite(c) ? (t + foreign - res) / c : 1.0;
        const double hi = 1 + (foreign + res) / (std::isfinite(c) ? std::min(t, c) : t);
        keep(r_foreign, effect(lo, f, hi,
                               fmt::format("other processes used {:.2f} of the {:.0f} core(s) "
                                           "the ranks may use",
                                           foreign, std::isfinite(c) ? c : 0.0)));
    }
    if (std::isfinite(wait) && wait >= contention_wait_threads && !over) {
        const double hi = 1 / (1 - std::min(wait, max_wait));
        keep(r_wait, effect(1 / (1 - std::min(wait / t, max_wait)), hi, hi, run_wait_text(wait)));
    }
    if (std::isfinite(steal) && steal >= contention_steal)
        keep(r_steal,
             effect(1, 1 / (1 - std::min(steal, max_wait)), 1 / (1 - std::min(2 * steal, max_wait)),
                    fmt::format("the hypervisor stole {:.0f}% of the cores' time", 100 * steal)));
    if (std::isfinite(others) && others >= 1)
        keep(r_gpu_shared, effect(1, 1 + others, 1 + others,
                                  fmt::format("{:.0f} other process(es) on the GPU", others)));
    if (std::isfinite(thr) && (static_cast<unsigned long long>(thr) & gpu_throttle_marks) != 0)
        keep(r_gpu_throttle, effect(1, 2, inf, "the GPU slowed its clocks"));
}

} // namespace

const char* to_string(mark_phase p) {
    return p == mark_phase::compute ? "compute" : "communication";
}

std::string effect_text(const mark_effect& e) {
    const auto num = [](double x) {
        return std::isfinite(x) ? fmt::format("{:.2f}", x) : std::string("unbounded");
    };
    return fmt::format("x{} [{}, {}] on {}", num(e.factor), num(e.lo), num(e.hi),
                       to_string(e.phase));
}

std::vector<mark_effect> machine_effects(const machine_fields& m) {
    std::vector<mark_effect> worst(n_rules);
    std::vector<bool> found(n_rules, false);
    std::size_t ranks = 0;
    for (const auto& [name, v] : m)
        ranks = std::max(ranks, v.size());
    for (std::size_t r = 0; r < ranks; ++r)
        rank_effects(m, r, worst, found);
    std::vector<mark_effect> out;
    for (std::size_t k = 0; k < worst.size(); ++k)
        if (found[k])
            out.push_back(std::move(worst[k]));
    return out;
}

mark_effect on_whole_time(const mark_effect& e, double compute_share) {
    double share = e.phase == mark_phase::compute ? compute_share : 1 - compute_share;
    share = std::isfinite(share) ? std::clamp(share, 0.0, 1.0) : 1.0;
    mark_effect w = e;
    const auto scale = [share](double x) { return std::isinf(x) ? x : 1 + share * (x - 1); };
    w.factor = scale(e.factor);
    w.lo = scale(e.lo);
    w.hi = share > 0 ? scale(e.hi) : 1.0;
    return w;
}

double largest_effect(const std::vector<mark_effect>& effects, double compute_share) {
    double most = 1;
    for (const mark_effect& e : effects)
        most = std::max(most, on_whole_time(e, compute_share).hi);
    return most;
}

} // namespace ringscale::machine
