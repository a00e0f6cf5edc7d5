// DeepSpeed-Ulysses' exchange inside a group of u ranks: tensors move between sequence
// sharding (every head, this rank's rows) and head sharding (heads/u of them, every row the
// group holds) with one all-to-all. Head-sharded rows are kept in ascending global position
// order, because the attention kernels classify tiles by their first and last positions.
// Tensors live in a kernels::executor's memory; packing and unpacking run on its compute
// stream, the all-to-all on the group's communicator (bytes), ordered after the packing.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/dev_buffer.hpp"
#include "src/base/clock.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::jobs::schemes {

/// Where rows go inside one Ulysses group. Built once per case (no communication).
struct ulysses_layout {
    comm::communicator* comm = nullptr; ///< the group; size() = u
    kernels::executor* dev = nullptr;
    std::int64_t batch = 1, head_dim = 64;     ///< head_dim: elements per row (1 for LSE rows)
    std::int64_t rows_local = 0;               ///< rows per member (S/P)
    std::vector<std::int64_t> group_pos;       ///< the group's positions, ascending
    std::vector<kernels::dev_positions> index; ///< [member]: member's row t in group_pos
};

/// Layout of a group whose member i holds global positions `member_pos[i]` (each ascending,
/// all of the same length); members are ordered by their rank in `group`.
ulysses_layout make_ulysses_layout(comm::communicator& group, kernels::executor& dev,
                                   std::int64_t batch, std::int64_t head_dim,
                                   const std::vector<std::vector<std::int64_t>>& member_pos);

/// One tensor in an exchange: `heads` is its head count in the sequence-sharded form,
/// `elem_bytes` its element size (4 for fp32, 2 for bf16/fp16 attention inputs).
struct ulysses_tensor {
    const void* src = nullptr;
    void* dst = nullptr;
    std::int64_t heads = 0;
    std::size_t elem_bytes = 4;
};

/// Scratch for the exchanges of one case (send and receive staging), reused every call.
struct ulysses_scratch {
    kernels::dev_buffer<unsigned char> send, recv;
};

/// Bytes one rank sends to each member (all_to_all's count per rank) for `tensors`.
std::size_t ulysses_bytes_per_rank(const ulysses_layout& lay,
                                   const std::vector<ulysses_tensor>& tensors);

/// Make sure `scratch` holds `bytes_per_rank` to and from each member (allocates on growth).
void ulysses_reserve(const ulysses_layout& lay, std::size_t bytes_per_rank,
                     ulysses_scratch& scratch);

/// Collective over lay.comm: each src [B, heads, rows_local, D] (sequence-sharded) -> dst
/// [B, heads/u, group rows, D] (this member's head slice, rows in group_pos order), all
/// tensors in one all-to-all. Packing counts as compute, the all-to-all as comm_wait.
void ulysses_to_heads(const ulysses_layout& lay, const std::vector<ulysses_tensor>& tensors,
                      ulysses_scratch& scratch, phase_timer& timer);

/// Collective over lay.comm: the inverse, each src [B, heads/u, group rows, D] -> dst
/// [B, heads, rows_local, D].
void ulysses_to_sequence(const ulysses_layout& lay, const std::vector<ulysses_tensor>& tensors,
                         ulysses_scratch& scratch, phase_timer& timer);

} // namespace ringscale::jobs::schemes
