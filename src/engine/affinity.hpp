// CPU affinity of this process (the cores sched_getaffinity allows) and the launch-time
// warning when the MPI launcher's binding gives a rank fewer cores than its share.
#pragma once

#include <string>
#include <vector>

namespace ringscale {

/// Cores this process may run on, as a count and a list ("0-3,8"). Not collective.
struct cpu_affinity {
    int cores = 1;
    std::string list;
};

/// The calling thread's affinity mask (sched_getaffinity), or all online cores if it fails.
cpu_affinity current_affinity();

/// "0-3,8" from the sorted core numbers `cores`. Pure.
std::string core_list_text(const std::vector<int>& cores);

/// One warning line (no newline) when the fewest cores any rank may use, `min_cores`, is
/// below the share `node_cores / ranks_per_node` (at least 1); "" otherwise. Names the fix
/// for mpirun and srun. Pure.
std::string affinity_warning(int min_cores, int node_cores, int ranks_per_node);

/// One warning line (no newline) when the threads of a node's ranks outnumber the cores they
/// may use together: `node_threads` (its ranks' threads summed) above `union_cores` (the union
/// of their affinities: two ranks under `taskset -c 0` share one core), or `threads_per_rank`
/// above `min_cores` (the fewest cores a rank may use); "" otherwise. Oversubscribed ranks wait
/// for a core, so their times and any efficiency computed from them are limited by it (and
/// their cases are marked: src/base/machine_marks.hpp). Pure.
std::string oversubscription_warning(int node_threads, int union_cores, int threads_per_rank,
                                     int min_cores);

} // namespace ringscale
