// The machine watched over a launch: the machine context (which ranks share a kernel, the
// cores they may use), the drift sentinel's probes at launch start, every few cases and at
// launch end (--sentinel), and the sentinel's verdict. The launcher calls it around its cases;
// rank 0 hands the probes and the verdict to the results writer.
#pragma once

#include "src/engine/config.hpp"
#include "src/engine/job.hpp"
#include "src/engine/machine_probe.hpp"
#include "src/engine/results_writer.hpp"
#include "src/engine/sentinel.hpp"

#include <string>
#include <vector>

namespace ringscale {

class launch_monitor {
  public:
    /// Collective (control communicator): the machine context. `gpu_bus_id` "" on the CPU.
    launch_monitor(jobs::run_context& ctx, const launch_config& cfg, const std::string& gpu_bus_id,
                   int gpu_ranks_sharing);
    const machine_context& machine() const { return m_machine; }
    /// Collective: before the case of run index `run_index` (0, 1, ...): the first probe, or
    /// one when due. `writer`: rank 0's, nullptr elsewhere.
    void before_case(int run_index, results_writer* writer);
    /// Collective: a case ended (rank 0's clock drives the schedule, so every rank agrees).
    void after_case();
    /// Collective: the last probe after `cases` cases and the verdict, written by `writer`.
    /// Returns the verdict's one line ("" when the launch did not drift or has no sentinel).
    std::string finish(int cases, results_writer* writer);
    /// Seconds the probes took so far, and how many ran.
    double probe_s() const { return m_probe_s; }
    int probes() const { return static_cast<int>(m_probes.size()); }
    /// Seconds since the monitor was made (the launch's cases and probes).
    double elapsed_s() const;
    /// What the machine did over the launch, for rank 0 to print after the table: the
    /// sentinel's cost and verdict (`drift`, from finish) and the `contended` cases; lines
    /// starting "# ", each ending in a newline ("" when there is nothing to say).
    std::string report(int contended, const std::string& drift) const;

  private:
    void probe(int before_case, results_writer* writer);
    jobs::run_context& m_ctx;
    machine_context m_machine;
    bool m_enabled = true;
    sentinel_schedule m_schedule;
    std::vector<machine::probe> m_probes;
    double m_start_s = 0;
    double m_probe_s = 0;
};

} // namespace ringscale
