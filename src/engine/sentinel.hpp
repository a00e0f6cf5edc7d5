// The drift sentinel: a short fixed probe run at launch start, every few cases and at launch
// end, so that a machine that changed during the launch (throttling, a neighbour, a degraded
// link) shows in the file even where no case says so. The probe: a small GEMM through the
// executor on every rank (one thread on a CPU) and, at two or more ranks, a 64 KiB allreduce
// on the job's communicator, each the median of a few runs, with the machine state over it.
// Its verdict (src/base/machine_marks.hpp, judge_drift) is written when the launch ends.
#pragma once

#include "src/engine/job.hpp"
#include "src/engine/machine_probe.hpp"

namespace ringscale {

/// Collective over ctx's communicators: run the probe once; `before_case` is the run index of
/// the next case (the case count at the end). Every rank returns the same probe.
machine::probe run_sentinel_probe(jobs::run_context& ctx, const machine_context& mctx,
                                  int before_case);

/// A CPU probe on a quiet core (a 256^3 GEMM six times and a 64 KiB allreduce), s: what the
/// first probe is assumed to cost before one has run.
inline constexpr double probe_estimate_s = 0.005;

/// When the next probe is due: at launch start and every `every` cases; or with every = 0
/// (auto) when it fits the budget: all probes so far and one more of their mean cost (of
/// probe_estimate_s before any ran) within 1/budget_factor of the time since the launch
/// started. So the sentinel costs about 1% of a launch (the default factor 100): its first
/// probe comes once the launch has run 1 s (100 x 2 x 5 ms), and a launch too short for two
/// probes, which drift needs, has none (a start and an end probe in every launch would cost
/// 2.6-5.4% of 0.2 s launches). Pure.
class sentinel_schedule {
  public:
    explicit sentinel_schedule(int every, double budget_factor = 100.0)
        : m_every(every), m_factor(budget_factor) {}
    /// A probe ran and took `probe_s`, at launch time `now_s`.
    void probe_ran(double probe_s, double now_s);
    /// A case ended at launch time `now_s`.
    void case_ended(double now_s);
    /// Whether a probe is due before the next case.
    bool due() const;
    /// Whether the probe at the launch's end is due: always every `every` cases, within the
    /// budget in auto after at least one probe (a launch that cannot afford it keeps the
    /// probes it ran).
    bool final_due() const;

  private:
    int m_every = 0;
    double m_factor = 100;
    int m_cases_since = 0;
    double m_probe_total_s = 0;
    int m_probes = 0;
    double m_last_probe_end_s = 0;
    double m_now_s = 0;
};

} // namespace ringscale
