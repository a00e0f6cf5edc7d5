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

double at(const machine_fields& m, const char* name, std::size_t rank) {
    const auto it = m.find(name);
    return it != m.end() && rank < it->second.size() ? it->second[rank] : nan;
}

std::size_t ranks_of(const machine_fields& m) {
    std::size_t n = 0;
    for (const auto& [name, v] : m)
        n = std::max(n, v.size());
    return n;
}

// One rank's reason and how strongly it holds (for the worst over ranks), or {"", 0}.
std::pair<std::string, double> rank_reason(const machine_fields& m, std::size_t r) {
    const double foreign = at(m, ds::foreign_load, r), res = at(m, ds::load_resolution, r);
    const double cores = at(m, ds::load_cores, r), own = at(m, ds::own_threads, r);
    const double wait = at(m, ds::run_wait, r), steal = at(m, ds::steal, r);
    const double others = at(m, ds::gpu_other_processes, r), thr = at(m, ds::gpu_throttle, r);
    // The launch's own threads outnumber the cores its ranks may use together (two ranks
    // under `taskset -c 0`): they take turns, whatever else runs.
    if (std::isfinite(own) && std::isfinite(cores) && own > cores)
        return {oversubscribed_text(own, cores), 100 * own / cores};
    if (std::isfinite(foreign) && foreign - (std::isfinite(res) ? res : 0) >= contention_cores)
        return {fmt::format("other processes used {:.2f} of the {:.0f} core(s) the ranks may "
                            "use (+-{:.2f})",
                            foreign, cores, std::isfinite(res) ? res : 0.0),
                foreign / contention_cores};
    if (std::isfinite(wait) && wait >= contention_wait_threads && std::isfinite(own) &&
        std::isfinite(cores) && own <= cores)
        return {fmt::format("{} while its launch's {:.0f} thread(s) fit the {:.0f} core(s)",
                            run_wait_text(wait), own, cores),
                wait / contention_wait_threads};
    if (std::isfinite(steal) && steal >= contention_steal)
        return {fmt::format("the hypervisor stole {:.0f}% of the cores' time", 100 * steal),
                steal / contention_steal};
    if (std::isfinite(others) && others >= 1)
        return {fmt::format("{:.0f} other process(es) on the GPU", others), others};
    if (std::isfinite(thr) && (static_cast<unsigned long long>(thr) & gpu_throttle_marks) != 0)
        return {fmt::format("the GPU slowed its clocks (NVML throttle reasons {:#x}: thermal or "
                            "hardware slowdown)",
                            static_cast<unsigned long long>(thr)),
                1.0};
    return {"", 0.0};
}

// A value that must be NaN (unknown) or within [lo, hi] (and whole, when `whole`).
std::string range_problem(const machine_fields& m, const char* name, std::size_t world, double lo,
                          double hi, bool whole, bool always) {
    const auto it = m.find(name);
    if (it == m.end())
        return "";
    if (it->second.size() != world)
        return fmt::format("machine/{} has {} values for {} ranks", name, it->second.size(), world);
    for (std::size_t r = 0; r < world; ++r) {
        const double v = it->second[r];
        if (std::isnan(v) && always)
            return fmt::format("machine/{} [rank {}] is NaN: the launcher always measures it", name,
                               r);
        if (std::isnan(v)) // not known where it was measured (no counter, no GPU query)
            continue;
        if (!(v >= lo && v <= hi) || (whole && v != std::floor(v)))
            return fmt::format("machine/{} [rank {}] is {}: it must be {}in [{:g}, {:g}]", name, r,
                               v, whole ? "a whole number " : "", lo, hi);
    }
    return "";
}

} // namespace

std::string oversubscribed_text(double threads, double cores) {
    return fmt::format("oversubscribed: {:.0f} threads on {:.0f} core{}", threads, cores,
                       cores == 1 ? "" : "s");
}

std::string run_wait_text(double wait_s_per_s) {
    // Not "of the time": the seconds of every thread are summed, so a rank whose threads wait
    // together waits more than one second per second.
    return fmt::format("a rank's threads waited for a core {:.2f} s per second (summed over "
                       "its threads)",
                       wait_s_per_s);
}

std::string contention_reason(const machine_fields& m) {
    std::pair<std::string, double> worst{"", 0.0};
    for (std::size_t r = 0; r < ranks_of(m); ++r)
        if (auto rr = rank_reason(m, r); rr.second > worst.second)
            worst = std::move(rr);
    return worst.first;
}

std::string machine_fields_problem(const machine_fields& m, int world) {
    const auto w = static_cast<std::size_t>(std::max(world, 0));
    constexpr double big = 1 << 24;
    // `always`: a field the launcher computes on every rank from counters it always has (its
    // own threads, its context switches: machine_probe.cpp), so NaN there is no "not known"
    // but a value no launch writes: refused as inf is. Elsewhere NaN is "not known" (no
    // schedstat, no cpufreq, no GPU query), as the launcher writes it.
    const struct {
        const char* name;
        double lo, hi;
        bool whole, always;
    } ranges[] = {{ds::load_cores, 1, big, true, false},
                  {ds::own_threads, 1, big, true, true},
                  {ds::load_resolution, 0, big, false, false},
                  {ds::foreign_load, -big, big, false, false},
                  {ds::steal, 0, 1, false, false},
                  {ds::iowait, 0, 1, false, false},
                  {ds::run_wait, 0, big, false, false},
                  {ds::nivcsw, 0, 1e15, true, true},
                  {ds::cpu_mhz, 1e-3, 1e5, false, false},
                  {ds::gpu_sm_clock_mhz, 0, 1e5, false, false},
                  {ds::gpu_throttle, 0, 9007199254740991.0, true, false},
                  {ds::gpu_other_processes, 0, big, true, false}};
    for (const auto& r : ranges)
        if (std::string why = range_problem(m, r.name, w, r.lo, r.hi, r.whole, r.always);
            !why.empty())
            return why;
    for (std::size_t r = 0; r < w; ++r) {
        const double foreign = at(m, ds::foreign_load, r), cores = at(m, ds::load_cores, r);
        const double res = at(m, ds::load_resolution, r);
        const double slack = cores + (std::isfinite(res) ? res : 0);
        if (std::isfinite(foreign) && std::isfinite(cores) && std::fabs(foreign) > slack)
            return fmt::format("machine/foreign_load [rank {}] is {} on {} core(s): more than "
                               "the cores can run",
                               r, foreign, cores);
        const double steal = at(m, ds::steal, r), iowait = at(m, ds::iowait, r);
        if (std::isfinite(steal) && std::isfinite(iowait) && steal + iowait > 1 + 1e-9)
            return fmt::format("machine/steal and iowait [rank {}] add up to {:.3g} of the cores' "
                               "time: more than all of it",
                               r, steal + iowait);
    }
    return "";
}

double drift_reference(std::vector<double> times) {
    std::sort(times.begin(), times.end());
    for (std::size_t i = 0; i + 1 < times.size(); ++i)
        if (times[i + 1] <= drift_reference_agreement * times[i])
            return times[i];
    return times.empty() ? INFINITY : times.front();
}

namespace {

// A probe's time over the reference, per kind (NaN where it has none).
struct probe_ratio {
    double compute = 0, allreduce = 0;
    bool clean = false;
    bool beyond() const {
        return clean &&
               (compute > drift_tolerance_compute || allreduce > drift_tolerance_allreduce);
    }
};

} // namespace

drift_verdict judge_drift(const std::vector<probe>& probes, int cases) {
    drift_verdict v;
    v.case_reason.assign(static_cast<std::size_t>(std::max(cases, 0)), "");
    v.case_effect.assign(v.case_reason.size(), mark_effect{});
    std::vector<double> compute, allreduce;
    std::vector<probe_ratio> ratio(probes.size());
    for (std::size_t i = 0; i < probes.size(); ++i) {
        ratio[i].clean = contention_reason(probes[i].machine).empty();
        if (!ratio[i].clean)
            continue;
        compute.push_back(probes[i].compute_s);
        if (std::isfinite(probes[i].allreduce_s))
            allreduce.push_back(probes[i].allreduce_s);
    }
    const double ref_c = drift_reference(compute), ref_a = drift_reference(allreduce);
    for (std::size_t i = 0; i < probes.size(); ++i) {
        ratio[i].compute = probes[i].compute_s / ref_c;
        ratio[i].allreduce =
            std::isfinite(probes[i].allreduce_s) ? probes[i].allreduce_s / ref_a : 0.0;
    }
    double worst = 0;
    for (std::size_t i = 0; i < probes.size(); ++i) {
        if (!ratio[i].beyond())
            continue;
        // A probe next to it agrees that the machine changed, or this one alone is far beyond.
        const bool agreed =
            (i > 0 && ratio[i - 1].beyond()) || (i + 1 < probes.size() && ratio[i + 1].beyond());
        const double lone = agreed ? 1.0 : drift_lone_factor;
        const double fc = ratio[i].compute, fa = ratio[i].allreduce;
        const bool compute = fc > lone * drift_tolerance_compute;
        if (!compute && !(fa > lone * drift_tolerance_allreduce))
            continue;
        const double factor = compute ? fc : fa;
        const double tolerance =
            lone * (compute ? drift_tolerance_compute : drift_tolerance_allreduce);
        const probe& p = probes[i];
        const std::string why = fmt::format("the sentinel's {} probe before case {} took {:.2f}x "
                                            "the launch's fastest (tolerance {:.2f}x{})",
                                            compute ? "compute" : "allreduce", p.before_case,
                                            factor, tolerance, agreed ? "" : ", a lone probe");
        mark_effect e;
        e.phase = compute ? mark_phase::compute : mark_phase::communication;
        e.factor = factor;
        e.lo = std::max(1.0, factor / drift_reference_agreement);
        e.hi = factor * drift_reference_agreement;
        e.reason = why;
        const double how = factor / tolerance;
        v.drifted = true;
        if (how > worst) {
            worst = how;
            v.reason = why;
        }
        // The cases since the probe before this one, and up to the probe after it.
        const int from = i > 0 ? probes[i - 1].before_case : 0;
        const int to = i + 1 < probes.size() ? probes[i + 1].before_case : cases;
        for (int c = std::max(from, 0); c < std::min(to, cases); ++c) {
            const auto k = static_cast<std::size_t>(c);
            if (v.case_reason[k].empty())
                v.case_reason[k] = why;
            if (e.hi > v.case_effect[k].hi)
                v.case_effect[k] = e;
        }
    }
    return v;
}

std::string probes_problem(const std::vector<probe>& probes, int cases) {
    int last = 0;
    for (std::size_t i = 0; i < probes.size(); ++i) {
        const probe& p = probes[i];
        if (p.before_case < last || p.before_case > cases)
            return fmt::format("sentinel probe {} says it ran before case {}: probes run in "
                               "order, between cases 0 and {}",
                               i, p.before_case, cases);
        last = p.before_case;
        if (!(std::isfinite(p.compute_s) && p.compute_s > 0 && p.compute_s < 1e6))
            return fmt::format("sentinel probe {} has compute_s {}: a probe time is finite and "
                               "> 0",
                               i, p.compute_s);
        if (!std::isnan(p.allreduce_s) &&
            !(std::isfinite(p.allreduce_s) && p.allreduce_s > 0 && p.allreduce_s < 1e6))
            return fmt::format("sentinel probe {} has allreduce_s {}: a probe time is finite "
                               "and > 0",
                               i, p.allreduce_s);
    }
    return "";
}

} // namespace ringscale::machine
