#include "src/engine/affinity.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>
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
    std::vector<int> cores;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set))
                cores.push_back(c);
    } else {
        const long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (int c = 0; c < n; ++c)
            cores.push_back(c);
    }
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

} // namespace ringscale
