// What the machine is doing while a case runs, read from /proc, sysfs and getrusage: the CPU
// time every core spent busy, stolen and waiting for I/O (/proc/stat), this process's own CPU
// time, involuntary context switches and time its threads waited for a core (getrusage,
// /proc/self/task/*/schedstat), and the cores' current frequency where sysfs has it. The
// parsers are pure (tested on text); the readers never throw and say "unknown" with NaN. No
// MPI: the engine combines the ranks' samples (src/engine/machine_probe.*).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ringscale::machine {

/// One core's counters from /proc/stat, in clock ticks (USER_HZ).
struct cpu_ticks {
    std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                  steal = 0;
    /// Time the core ran something: user, nice, system, irq and softirq (guest time is
    /// inside user); idle, iowait and steal are not.
    std::uint64_t busy() const { return user + nice + system + irq + softirq; }
    /// Every state the core can be in.
    std::uint64_t total() const { return busy() + idle + iowait + steal; }
};

/// Every core's counters, by core number ("cpu3" -> 3); the all-core "cpu" line left out.
using proc_stat = std::map<int, cpu_ticks>;

/// The per-core lines of /proc/stat text. Lines it does not know, and malformed ones, are
/// skipped; missing trailing fields (old kernels) read as 0. Pure.
proc_stat parse_proc_stat(const std::string& text);

/// /proc/stat now; empty when it cannot be read.
proc_stat read_proc_stat();

/// Clock ticks per second of /proc/stat (sysconf(_SC_CLK_TCK), 100 when unknown).
double ticks_per_second();

/// What changed on `cores` between two /proc/stat readings, in seconds of core time.
struct core_window {
    double busy_s = 0;   ///< time the cores ran anything
    double steal_s = 0;  ///< time a hypervisor gave the cores to someone else
    double iowait_s = 0; ///< idle time with I/O outstanding
    double total_s = 0;  ///< every state: about wall time x cores
    int cores = 0;       ///< cores found in both readings
};

/// The change from `before` to `after` summed over `cores` (cores missing from either reading
/// are left out, a counter that went back counts 0), at `hz` ticks per second. Pure.
core_window window_on(const proc_stat& before, const proc_stat& after,
                      const std::vector<int>& cores, double hz);

/// This process at one instant.
struct process_sample {
    double wall_s = 0;       ///< steady clock
    double cpu_s = 0;        ///< user + system time of every thread (getrusage)
    double run_wait_s = 0;   ///< time its threads waited on a run queue (schedstat); NaN
                             ///< when the kernel has no schedstat
    std::int64_t nivcsw = 0; ///< involuntary context switches (getrusage)
};

/// The wait time in seconds from /proc/<pid>/task/<tid>/schedstat text ("run_ns wait_ns
/// slices"); NaN when the text is not three numbers. Pure.
double parse_schedstat_wait_s(const std::string& text);

/// This process now (every thread's schedstat summed). Never throws.
process_sample sample_process();

/// The cores this process may run on (sched_getaffinity), ascending; every online core when
/// the call fails.
std::vector<int> allowed_cores();

/// Mean current frequency in MHz of `cores` from sysfs (cpufreq/scaling_cur_freq, kHz); NaN
/// when sysfs has it for none of them (virtual machines, containers without cpufreq).
double cpu_mhz(const std::vector<int>& cores);

/// This kernel's boot id (/proc/sys/kernel/random/boot_id), "" when unreadable: processes
/// that share it share /proc/stat's cores, whatever their host names (network namespaces
/// emulating nodes on one machine do).
std::string boot_id();

} // namespace ringscale::machine
