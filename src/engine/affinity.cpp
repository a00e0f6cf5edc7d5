#include "src/engine/affinity.hpp"

#include "src/base/machine_state.hpp"

#include <fmt/format.h>
#include <vector>

namespace ringscale {

std::string core_list_text(const std::vector<int>& cores) {
    std::string out;
    for (std::size_t i = 0; i < cores.size();) {
        std::size_t j = i;
        while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1)
            ++j;
        out += (out.empty() ? "" : ",") +
               (j == i ? fmt::format("{}", cores[i]) : fmt::format("{}-{}", cores[i], cores[j]));
        i = j + 1;
    }
    return out;
}

cpu_affinity current_affinity() {
    const std::vector<int> cores = machine::allowed_cores();
    cpu_affinity a;
    a.cores = cores.empty() ? 1 : static_cast<int>(cores.size());
    a.list = core_list_text(cores);
    return a;
}

std::string affinity_warning(int min_cores, int node_cores, int ranks_per_node) {
    const int share = std::max(1, node_cores / std::max(1, ranks_per_node));
    if (min_cores >= share)
        return "";
    return fmt::format(
        "ringscale: warning: a rank may run on only {} core(s) of its share of {} ({} cores, {} "
        "rank(s) per node): the MPI launcher bound it; threads and timings are limited by the "
        "binding (mpirun --bind-to none or --map-by slot:PE={}; srun --cpus-per-task={})",
        min_cores, share, node_cores, ranks_per_node, share, share);
}

std::string oversubscription_warning(int node_threads, int union_cores, int threads_per_rank,
                                     int min_cores) {
    const int threads = std::max(1, node_threads), cores = std::max(1, union_cores);
    const int per_rank = std::max(1, threads_per_rank);
    if (threads > cores)
        return fmt::format(
            "ringscale: warning: oversubscribed: {} rank(s) x {} thread(s) = {} threads on {} "
            "core(s) this node's ranks may use together: ranks wait for a core, so times grow "
            "and a parallel efficiency cannot pass {:.2f}; its cases are marked (run at most {} "
            "rank(s) per node, fewer --threads, or allow more cores: taskset, mpirun --bind-to "
            "none)",
            threads / per_rank, per_rank, threads, cores, static_cast<double>(cores) / threads,
            std::max(1, cores / per_rank));
    if (per_rank > min_cores)
        return fmt::format("ringscale: warning: oversubscribed: a rank runs {} thread(s) on the "
                           "{} core(s) it may use: its threads take turns (--threads {}, or bind "
                           "with mpirun --bind-to none or --map-by slot:PE={})",
                           per_rank, min_cores, min_cores, per_rank);
    return "";
}

} // namespace ringscale
