// The table of collective operations the `collectives` job measures: for each one, its
// buffer sizes (out of place and in place), how to run it, nccl-tests' bus-bandwidth factor
// and an exact check.
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
    std::size_t recv_count = 0; ///< elements in the receive buffer (the output)
    /// In place (one buffer, communicator.hpp's convention): its elements, and whether the
    /// rank's input (all-gather) or output (reduce-scatter) is its own block of `count`
    /// elements rather than the buffer's start.
    std::size_t inplace_count = 0;
    bool input_in_own_block = false;
    bool output_in_own_block = false;
};

/// In place: where the rank's input (send_count elements) starts in the one buffer.
inline std::size_t in_place_input_offset(const collective_sizes& sz, int rank) {
    return sz.input_in_own_block ? static_cast<std::size_t>(rank) * sz.count : 0;
}
/// In place: where the rank's output (recv_count elements) starts in the one buffer.
inline std::size_t in_place_output_offset(const collective_sizes& sz, int rank) {
    return sz.output_in_own_block ? static_cast<std::size_t>(rank) * sz.count : 0;
}

/// What a case gives an operation besides its buffers: the root (broadcast) and the peer
/// distance (sendrecv: each rank sends to rank + shift and receives from rank - shift).
struct collective_peers {
    int root = 0;
    int shift = 1;
};

struct collective_op {
    std::string name;
    double (*busbw_factor)(int ranks);
    collective_sizes (*sizes)(std::uint64_t bytes, int ranks);
    /// Run once (collective). `send`/`recv` hold send_count/recv_count floats; in place they
    /// are the rank's input and output in the one buffer (see in_place_*_offset).
    void (*run)(comm::communicator& c, const float* send, float* recv, const collective_sizes& sz,
                const collective_peers& peers);
    /// Of output elements [first, first + n), given in `out[0..n)`, those that differ from the
    /// exact expected values on this rank.
    std::uint64_t (*count_wrong)(int rank, int ranks, const float* out, std::size_t first,
                                 std::size_t n, const collective_sizes& sz,
                                 const collective_peers& peers);
    /// Only the root has an input (broadcast); the others' buffers are output only.
    bool input_on_root_only = false;
    /// Why the operation has no in-place form; nullptr when it has one.
    const char* no_in_place = nullptr;
    /// Part of `--op all` (the six blocking operations); the nonblocking forms (iallreduce,
    /// iallgather, ireduce_scatter: posted, then waited for, as the jobs call them) are named.
    bool in_all = true;
};

/// Whether `rank` supplies input to `op` (every rank, or only the root for broadcast).
inline bool has_input(const collective_op& op, int rank, int root) {
    return !op.input_on_root_only || rank == root;
}

/// count_wrong over a whole output of sz.recv_count elements in host memory.
inline std::uint64_t count_wrong_all(const collective_op& op, int rank, int ranks, const float* out,
                                     const collective_sizes& sz, const collective_peers& peers) {
    return op.count_wrong(rank, ranks, out, 0, sz.recv_count, sz, peers);
}

/// The input value of element `i` on rank `rank`: a small integer, so every sum is exact.
inline float collective_value(int rank, std::size_t i) {
    return static_cast<float>(static_cast<long>((rank + 1) * 7 + (i % 1021) * 13) % 101 - 50);
}

/// Every operation: those of `--op all` in the order it runs them, then the nonblocking forms.
const std::vector<collective_op>& all_ops();
const collective_op& find_op(const std::string& name);
/// Operations named in a --op list ("all" expands); config_error for unknown names.
std::vector<const collective_op*> ops_from_list(const std::vector<std::string>& names);

} // namespace ringscale::jobs
