// Run metadata for /meta (Adiak key names where one exists) and the rank-to-host map.
#pragma once

#include "comm/communicator.hpp"
#include "src/base/clock.hpp"
#include "src/engine/config.hpp"
#include "src/engine/params.hpp"

#include <map>
#include <string>
#include <vector>

namespace ringscale {

struct run_metadata {
    jobs::attr_map attrs;                 ///< written as attributes of /meta
    std::vector<std::string> hosts;       ///< /meta/hosts, in order of first appearance
    std::vector<std::int32_t> host_index; ///< /ranks/host_index [world]
    std::vector<std::int32_t> local_rank; ///< /ranks/local_rank [world]
    /// More per-rank datasets of /ranks (e.g. gpu_index; gpu_uuid), each [world].
    std::map<std::string, std::vector<std::int32_t>> rank_ints;
    std::map<std::string, std::vector<std::string>> rank_strings;
    /// Per-host datasets of /meta (net_interfaces, gpu_peers), each [numhosts].
    std::map<std::string, std::vector<std::string>> host_strings;
    int my_local_rank = 0;
    int my_local_size = 1;
};

/// Collect metadata on every rank (collective over MPI_COMM_WORLD).
run_metadata collect_metadata(comm::communicator& world, const launch_config& cfg,
                              const timer_info& timer, int threads_per_rank);

/// Collective: every rank's `mine` (cut to 255 bytes), in rank order.
std::vector<std::string> gather_strings(comm::communicator& world, const std::string& mine);

/// Ranks sharing this node and this rank's index among them (collective).
void local_rank_info(int& local_rank, int& local_size);

} // namespace ringscale
