// The results format's names for what the machine did while a case ran (the optional
// /cases/<NNNN>/machine subgroup) and for the drift sentinel (/sentinel), apart from
// results_schema.hpp, which includes this header: every user of the schema sees them.
// src/base/RESULTS_SCHEMA.md documents them. No MPI.
#pragma once

#include <string>
#include <vector>

namespace ringscale::schema {

/// What the machine did while a case ran (optional: files written before it have none):
/// datasets of the subgroup /cases/<NNNN>/machine, f64 [world] each, NaN where not known
/// (src/base/machine_state.hpp reads them, src/base/machine_marks.hpp judges them). The load
/// figures are per machine (the ranks sharing a kernel, whatever their host names), the rest
/// per rank.
inline constexpr const char* machine_group = "machine";
namespace machine_ds {
/// Cores' worth of CPU time other processes used on the cores this machine's ranks may use,
/// averaged over the case: busy time of those cores (/proc/stat) less the ranks' own CPU time.
inline constexpr const char* foreign_load = "foreign_load";
/// The resolution of foreign_load (/proc/stat's clock ticks over the case), cores.
inline constexpr const char* load_resolution = "load_resolution";
/// Cores this machine's ranks may use (the union of their affinities).
inline constexpr const char* load_cores = "load_cores";
/// Threads the launch runs on this machine (its ranks' --threads summed).
inline constexpr const char* own_threads = "own_threads";
/// Share of those cores' time stolen by a hypervisor, and spent waiting for I/O (0..1).
inline constexpr const char* steal = "steal";
inline constexpr const char* iowait = "iowait";
/// The rank's threads waiting for a core, on average over the case (schedstat).
inline constexpr const char* run_wait = "run_wait";
/// The rank's involuntary context switches during the case (getrusage).
inline constexpr const char* nivcsw = "nivcsw";
/// Mean current frequency of the rank's cores at the case's end, MHz (sysfs cpufreq).
inline constexpr const char* cpu_mhz = "cpu_mhz";
/// --device cuda, through NVML: the lowest SM clock seen (MHz), the throttle reasons seen
/// (nvmlClocksThrottleReason bits, OR of the samples) and the most compute processes on the
/// rank's GPU beyond the launch's own ranks.
inline constexpr const char* gpu_sm_clock_mhz = "gpu_sm_clock_mhz";
inline constexpr const char* gpu_throttle = "gpu_throttle";
inline constexpr const char* gpu_other_processes = "gpu_other_processes";
} // namespace machine_ds

/// Every machine dataset name, in storage order.
const std::vector<std::string>& machine_datasets();

/// The drift sentinel (optional): /sentinel holds one subgroup per probe, "0000", "0001", ...
/// in run order, each with attributes before_case (int: the run index of the next case; the
/// case count for the probe at the end), compute_s, allreduce_s (NaN at one rank) and a
/// machine subgroup like a case's; /sentinel's own attributes, written when the launch ends:
/// the tolerances, drifted (int 0/1) and drift (why, "" when not drifted).
inline constexpr const char* sentinel_group = "sentinel";
namespace sentinel_attr {
inline constexpr const char* before_case = "before_case";
inline constexpr const char* compute_s = "compute_s";
inline constexpr const char* allreduce_s = "allreduce_s";
inline constexpr const char* tolerance_compute = "tolerance_compute";
inline constexpr const char* tolerance_allreduce = "tolerance_allreduce";
inline constexpr const char* drifted = "drifted";
inline constexpr const char* drift = "drift";
} // namespace sentinel_attr

} // namespace ringscale::schema
