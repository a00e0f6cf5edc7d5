#include "src/engine/launch_monitor.hpp"

#include "src/base/clock.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale {

launch_monitor::launch_monitor(jobs::run_context& ctx, const launch_config& cfg,
                               const std::string& gpu_bus_id, int gpu_ranks_sharing)
    : m_ctx(ctx), m_machine(make_machine_context(ctx.control, ctx.threads_per_rank, gpu_bus_id,
                                                 gpu_ranks_sharing)),
      m_enabled(cfg.sentinel_every >= 0), m_schedule(std::max(cfg.sentinel_every, 0)),
      m_start_s(now_s()) {}

double launch_monitor::elapsed_s() const {
    return now_s() - m_start_s;
}

std::string launch_monitor::report(int contended, const std::string& drift) const {
    std::string out;
    if (probes() > 0)
        out += fmt::format("# sentinel: {} probe(s), {:.3f} s of the launch's {:.3f} s ({:.2f}%)"
                           "{}{}\n",
                           probes(), m_probe_s, elapsed_s(),
                           100 * m_probe_s / std::max(elapsed_s(), 1e-9),
                           drift.empty() ? "; no drift" : "; DRIFT: ", drift);
    if (contended > 0)
        out += fmt::format("# {} case(s) measured on a contended machine: marked in the file "
                           "(outcome 'contention' says why)\n",
                           contended);
    return out;
}

void launch_monitor::probe(int before_case, results_writer* writer) {
    const double start = now_s();
    machine::probe p = run_sentinel_probe(m_ctx, m_machine, before_case);
    // Every rank agrees on whether the probe is due: the schedule runs on rank 0's clock.
    double took = now_s() - start;
    m_ctx.control.broadcast(&took, 1, comm::dtype::f64, 0);
    m_probe_s += took;
    if (writer)
        writer->append_probe(static_cast<int>(m_probes.size()), p);
    m_probes.push_back(std::move(p));
    double now = now_s() - m_start_s;
    m_ctx.control.broadcast(&now, 1, comm::dtype::f64, 0);
    m_schedule.probe_ran(took, now);
}

void launch_monitor::before_case(int run_index, results_writer* writer) {
    if (!m_enabled)
        return;
    if (m_schedule.due())
        probe(run_index, writer);
}

void launch_monitor::after_case() {
    if (!m_enabled)
        return;
    double now = now_s() - m_start_s;
    m_ctx.control.broadcast(&now, 1, comm::dtype::f64, 0);
    m_schedule.case_ended(now);
}

std::string launch_monitor::finish(int cases, results_writer* writer) {
    if (!m_enabled || m_probes.empty())
        return "";
    if (m_schedule.final_due()) // within the budget (sentinel.hpp)
        probe(cases, writer);
    const machine::drift_verdict v = machine::judge_drift(m_probes, cases);
    if (writer)
        writer->write_drift(v);
    return v.drifted ? v.reason : "";
}

} // namespace ringscale
