// The table of collective operations the `collectives` job measures: for each one, its
// buffer sizes, how to run it, nccl-tests' bus-bandwidth factor and an exact check.
#pragma once

#include "comm/communicator.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// Buffer sizes of one case. `bytes` follows nccl-tests: the whole buffer (allreduce,
/// broadcast, send/recv), the gathered output (allgather), the reduced input
/// (reduce-scatter), one rank's send buffer (all-to-all).
struct collective_sizes {
    std::uint64_t bytes = 0;    ///< after rounding to whole elements per rank
    std::size_t count = 0;      ///< elements per rank's block (or of the whole buffer)
    std::size_t send_count = 0; ///< elements in the send buffer
    std::size_t recv_count = 0; ///< elements in the receive buffer
};

struct collective_op {
    std::string name;
    double (*busbw_factor)(int ranks);
    collective_sizes (*sizes)(std::uint64_t bytes, int ranks);
    /// Run once (collective). `send`/`recv` hold send_count/recv_count floats.
    void (*run)(comm::communicator& c, const float* send, float* recv, const collective_sizes& sz,
                int root);
    /// Elements of this rank's output that differ from the exact expected values.
    std::uint64_t (*count_wrong)(int rank, int ranks, const float* recv, const collective_sizes& sz,
                                 int root);
};

/// The input value of element `i` on rank `rank`: a small integer, so every sum is exact.
inline float collective_value(int rank, std::size_t i) {
    return static_cast<float>(static_cast<long>((rank + 1) * 7 + (i % 1021) * 13) % 101 - 50);
}

/// Every operation, in the order `--op all` runs them.
const std::vector<collective_op>& all_ops();
const collective_op& find_op(const std::string& name);
/// Operations named in a --op list ("all" expands); config_error for unknown names.
std::vector<const collective_op*> ops_from_list(const std::vector<std::string>& names);

} // namespace ringscale::jobs
