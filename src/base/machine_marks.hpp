// When a measurement is marked as taken on a disturbed machine: the rules, in one place, that
// the launcher applies when it writes a case (outcome `contended`, `contention`) and the
// sentinel's verdict (/sentinel), and that ringscale-stats applies again when it reads them,
// so a file cannot hide a mark its own figures show. Pure; DESIGN.md ("Machine state") states
// the thresholds.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ringscale::machine {

/// Other processes' CPU use on the cores the ranks may use, in cores, beyond which a case is
/// contended (after subtracting the figure's resolution): a busy loop beside the ranks uses
/// 0.5 to 1 core; the launcher's own helpers (mpirun, daemons) a few hundredths.
inline constexpr double contention_cores = 0.25;
/// Threads of a rank waiting for a core, on average over the case, beyond which a case whose
/// own threads fit the cores is contended (something else held the cores).
inline constexpr double contention_wait_threads = 0.25;
/// Share of the cores' time a hypervisor stole beyond which a case is contended.
inline constexpr double contention_steal = 0.05;
/// NVML throttle reasons that mark a case: HW slowdown, SW and HW thermal slowdown, HW power
/// brake (NVML's nvmlClocksThrottleReason bits 0x8, 0x20, 0x40, 0x80). The SW power cap
/// (0x4) is a GPU running flat out at its limit, recorded but not a mark.
inline constexpr unsigned long long gpu_throttle_marks = 0x8 | 0x20 | 0x40 | 0x80;

/// The sentinel's tolerances: a probe slower than the launch's fastest clean probe by more
/// than these factors has drifted (compute: a small GEMM; allreduce: 64 KiB, whose latency
/// varies more).
inline constexpr double drift_tolerance_compute = 1.25;
inline constexpr double drift_tolerance_allreduce = 2.0;
/// Two probes within this factor of each other agree on a state of the machine.
inline constexpr double drift_reference_agreement = 1.1;

/// The reference the probes `times` (clean ones) are judged against: the fastest time two of
/// them agree on (drift_reference_agreement), so that a lone fast probe does not set it (a
/// shaped link's burst credit at launch start made one 64 KiB allreduce 2.6x faster than
/// the eleven others, which then all "drifted"); with no two that agree, the fastest. Pure.
double drift_reference(std::vector<double> times);

/// A case's machine fields (results_schema.hpp, schema::machine_ds): name -> one value per
/// rank; NaN = not known.
using machine_fields = std::map<std::string, std::vector<double>>;

/// Why the case whose fields are `m` was measured on a contended machine, one clause (the
/// worst rank's figures), or "" when nothing marks it (or nothing is known). Pure.
std::string contention_reason(const machine_fields& m);

/// Why the machine fields `m` of a case with `world` ranks cannot be believed (a value outside
/// its range, or figures that contradict each other), or "" when they can. Pure.
std::string machine_fields_problem(const machine_fields& m, int world);

/// One run of the sentinel's probe.
struct probe {
    int before_case = 0;    ///< run index of the next case (the case count at the end)
    double compute_s = 0;   ///< slowest rank's median probe GEMM, s
    double allreduce_s = 0; ///< median 64 KiB allreduce, s; NaN at one rank
    machine_fields machine; ///< the machine during the probe (as for a case)
};

/// The sentinel's verdict over a launch.
struct drift_verdict {
    bool drifted = false;
    std::string reason;                   ///< the worst probe, "" when not drifted
    std::vector<std::string> case_reason; ///< per case (run index): why it is marked, or ""
};

/// Judge the probes of a launch of `cases` cases (run order): the reference is the fastest
/// probe not itself measured under contention; a clean probe slower than the reference by
/// more than the tolerances has drifted, and marks the cases between the probe before it and
/// the probe after it. Probes under contention neither drift nor set the reference. Pure.
drift_verdict judge_drift(const std::vector<probe>& probes, int cases);

/// Why the probes cannot be believed (times not finite or <= 0, before_case outside
/// 0..cases or going back), or "". Pure.
std::string probes_problem(const std::vector<probe>& probes, int cases);

} // namespace ringscale::machine
