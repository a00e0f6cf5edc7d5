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
/// Threads of a rank waiting for a core, on average over the case (seconds waited per second,
/// summed over its threads), beyond which a case whose own threads fit the cores is contended
/// (something else held the cores).
inline constexpr double contention_wait_threads = 0.25;
/// Share of the cores' time a hypervisor stole beyond which a case is contended.
inline constexpr double contention_steal = 0.05;
/// NVML throttle reasons that mark a case: HW slowdown, SW and HW thermal slowdown, HW power
/// brake (NVML's nvmlClocksThrottleReason bits 0x8, 0x20, 0x40, 0x80). The SW power cap
/// (0x4) is a GPU running flat out at its limit, recorded but not a mark.
inline constexpr unsigned long long gpu_throttle_marks = 0x8 | 0x20 | 0x40 | 0x80;

/// The sentinel's tolerances: a probe slower than the launch's fastest clean probe by more
/// than these factors has drifted (compute: a small GEMM; allreduce: 64 KiB, whose latency
/// varies more), when a probe next to it agrees (also beyond its tolerance).
inline constexpr double drift_tolerance_compute = 1.25;
inline constexpr double drift_tolerance_allreduce = 2.0;
/// A lone slow probe (no probe next to it beyond the tolerance) drifts only beyond this many
/// times the tolerance: one probe of a short launch took 1.87x the fastest in about 1 of 12
/// quiet launches (a cold first probe), which marked a whole calibration.
inline constexpr double drift_lone_factor = 2.0;
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

/// The phase of a case's time a mark can change.
enum class mark_phase { compute, communication };

/// "compute" or "communication".
const char* to_string(mark_phase p);

/// What a mark can change and by how much: the estimated factor (>= 1) on the time of the
/// phase it touches, with an interval. compute: other processes on the ranks' cores,
/// oversubscription (threads over the cores the node's ranks may use together), threads
/// waiting, steal, the GPU's state, the sentinel's compute probe; communication: the
/// sentinel's communication probe. DESIGN.md ("Machine state") gives each estimate.
struct mark_effect {
    mark_phase phase = mark_phase::compute;
    double factor = 1, lo = 1, hi = 1; ///< estimate and interval, each >= 1 (hi may be inf)
    std::string reason;                ///< one clause, e.g. "oversubscribed: 2 threads on 1 core"
};

inline bool operator==(const mark_effect& a, const mark_effect& b) {
    return a.phase == b.phase && a.factor == b.factor && a.lo == b.lo && a.hi == b.hi &&
           a.reason == b.reason;
}

/// "x1.56 [1.22, 1.56] on compute" (hi inf: "unbounded").
std::string effect_text(const mark_effect& e);

/// The effects of the machine state `m` of a case: one per rule that marks it (the worst rank
/// for each, by hi), in the order of contention_reason's rules; empty when nothing marks it.
/// Estimates (T = the machine's own threads, C = the cores its ranks may use, F = other
/// processes' load, r = its resolution, w = a rank's threads waiting, s = steal):
/// oversubscribed (T > C): [1, T/C], factor T/C; other processes: factor max(1, (T+F)/C),
/// lo max(1, (T+F-r)/C), hi 1 + (F+r)/min(T, C); waiting: lo 1/(1 - w/T), hi = factor
/// 1/(1 - w) (as one thread; w capped at 0.9); steal: lo 1, factor 1/(1 - s), hi
/// 1/(1 - 2s); GPU shared by n processes: [1, 1 + n]; GPU throttled: [1, inf], factor 2. Pure.
std::vector<mark_effect> machine_effects(const machine_fields& m);

/// The effect `e` on a case's whole time when compute takes `compute_share` of it (0..1, the
/// rest communication; NaN: unknown, the phase taken as all of it): 1 + share (x - 1) for
/// each of factor, lo and hi. Pure.
mark_effect on_whole_time(const mark_effect& e, double compute_share);

/// The largest hi of `effects` on a case's whole time (on_whole_time), 1 when there are none:
/// what the decision rule (analysis/statistics/decision.hpp) takes as a side's mark. Pure.
double largest_effect(const std::vector<mark_effect>& effects, double compute_share);

/// Why the case whose fields are `m` was measured on a contended machine, one clause (the
/// worst rank's figures), or "" when nothing marks it (or nothing is known). Pure.
std::string contention_reason(const machine_fields& m);

/// "oversubscribed: T threads on C core(s)" ("1 core"), the reason of that mark. Pure.
std::string oversubscribed_text(double threads, double cores);

/// The run-queue wait of a rank's threads (`run_wait`: seconds waited for a core per second of
/// the case, summed over the rank's threads, so above 1 when several wait at once), as a mark
/// reads it: "a rank's threads waited for a core 6.38 s per second (summed over its threads)".
/// Pure.
std::string run_wait_text(double wait_s_per_s);

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
    /// Per case: the drift's effect (phase of the probe, factor its time over the reference,
    /// interval that over and times drift_reference_agreement); factor 1 when not marked.
    std::vector<mark_effect> case_effect;
};

/// Judge the probes of a launch of `cases` cases (run order): the reference is the fastest
/// probe not itself measured under contention; a clean probe slower than the reference by
/// more than the tolerances has drifted when a probe next to it is also beyond them, or
/// alone beyond drift_lone_factor times them, and marks the cases between the probe before
/// it and the probe after it. Probes under contention neither drift nor set the reference.
/// Pure.
drift_verdict judge_drift(const std::vector<probe>& probes, int cases);

/// Why the probes cannot be believed (times not finite or <= 0, before_case outside
/// 0..cases or going back), or "". Pure.
std::string probes_problem(const std::vector<probe>& probes, int cases);

} // namespace ringscale::machine
