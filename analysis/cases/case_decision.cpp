#include "case_decision.hpp"

#include "analysis/statistics/hierarchical.hpp"
#include "analysis/statistics/launch_test.hpp"
#include "src/base/backend.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ringscale::analysis {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

machine::mark_effect unbounded(std::string reason) {
    machine::mark_effect e;
    e.factor = inf;
    e.hi = inf;
    e.reason = std::move(reason);
    return e;
}

} // namespace

double compute_share(const case_data& c) {
    const std::size_t n = c.rows * c.world;
    if (c.compute_s.size() != n || c.comm_wait_s.size() != n || n == 0)
        return std::nan("");
    double compute = 0, comm = 0;
    for (const std::size_t r : c.measured_rows())
        for (std::size_t k = 0; k < c.world; ++k) {
            const double x = c.compute_s[r * c.world + k], y = c.comm_wait_s[r * c.world + k];
            if (std::isfinite(x) && std::isfinite(y) && x >= 0 && y >= 0) {
                compute += x;
                comm += y;
            }
        }
    return compute + comm > 0 ? compute / (compute + comm) : std::nan("");
}

std::vector<machine::mark_effect> launch_effects(const case_data& c) {
    std::vector<machine::mark_effect> out;
    if (!c.contention.empty()) {
        out = machine::machine_effects(c.machine);
        if (out.empty()) // the file says contended, its fields cannot say by how much
            out.push_back(unbounded(c.contention));
    }
    if (!c.drift.empty())
        out.push_back(c.drift_effect.hi > 1 ? c.drift_effect : unbounded(c.drift));
    return out;
}

machine::mark_effect whole_time_effect(const case_data& c, const machine::mark_effect& e) {
    const auto device = find_device_kind(c.text("device", to_string(device_kind::cpu)));
    const bool probe = !c.drift.empty() && e.reason == c.drift; // the sentinel's
    if (device.value_or(device_kind::cpu) == device_kind::cpu && !probe)
        return machine::on_whole_time(e, e.phase == machine::mark_phase::compute ? 1.0 : 0.0);
    return machine::on_whole_time(e, compute_share(c));
}

side_mark case_mark(const pooled_case& p) {
    side_mark m;
    double least = std::numeric_limits<double>::infinity();
    for (const case_data* c : p.launches) {
        const std::vector<machine::mark_effect> effects = launch_effects(*c);
        double launch_lo = 1; // the launch's largest mark, at its estimate
        if (!effects.empty())
            ++m.marked;
        for (const machine::mark_effect& e : effects) {
            const machine::mark_effect w = whole_time_effect(*c, e);
            launch_lo = std::max(launch_lo, w.factor);
            if (w.hi > m.effect || m.reason.empty()) {
                m.effect = std::max(m.effect, w.hi);
                m.reason = e.reason;
            }
        }
        least = std::min(least, launch_lo);
    }
    m.least = std::isfinite(least) ? least : 1;
    return m;
}

double case_noise(const pooled_case& a, const pooled_case& b) {
    const double na = launch_log_sd(launch_steps(a.launches));
    const double nb = launch_log_sd(launch_steps(b.launches));
    return std::isfinite(na) && std::isfinite(nb) ? std::max(na, nb) : std::nan("");
}

interval ratio_ci(const pooled_case& a, const pooled_case& b, std::size_t replicates,
                  std::uint64_t seed, double level) {
    const auto ratio = [](double x, double y) { return x / y; };
    const launch_samples la = launch_steps(a.launches), lb = launch_steps(b.launches);
    if (la.size() >= 2 && lb.size() >= 2)
        return percentile_interval(two_level_replicates(lb, la, ratio, replicates, seed), level);
    return bootstrap_two_sample(b.steps(), a.steps(), ratio, replicates, seed, level);
}

decision_inputs decision_for(const pooled_case& a, const pooled_case& b, const interval& ci,
                             double threshold) {
    decision_inputs in;
    in.launches_a = launch_steps(a.launches).size();
    in.launches_b = launch_steps(b.launches).size();
    in.ratio_lo = ci.lo;
    in.ratio_hi = ci.hi;
    in.threshold = threshold;
    in.noise = case_noise(a, b);
    const side_mark ma = case_mark(a), mb = case_mark(b);
    in.mark_a = ma.effect;
    in.mark_b = mb.effect;
    in.least_mark_a = ma.least;
    in.least_mark_b = mb.least;
    in.mark_reason_a = ma.reason;
    in.mark_reason_b = mb.reason;
    return in;
}

decision_result decide_cases(const pooled_case& a, const pooled_case& b, const interval& ci,
                             double threshold) {
    return decide(decision_for(a, b, ci, threshold));
}

} // namespace ringscale::analysis
