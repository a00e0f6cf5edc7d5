// How a global sequence is sharded over the ranks of a ring (contiguous, zigzag, striped),
// moving a global BHSD tensor's rows to a rank's shard and back, the ring schedule, and
// which (query block, key block) pairs a causal mask leaves visible.
#pragma once

#include "kernels/mask.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::kernels {

/// Sequence sharding: contiguous ranges, zigzag (chunks r and 2P-1-r), striped (i mod P),
/// balanced (units of equal visible work dealt greedily; kernels/mask_layout.hpp).
enum class layout { contiguous, zigzag, striped, balanced };

/// Parse "contiguous" | "zigzag" | "striped" | "balanced"; throws config_error naming the
/// choices.
layout parse_layout(const std::string& text);

/// Name of a layout, as parse_layout accepts it.
const char* to_string(layout value);

/// Throws config_error (one line) unless ranks >= 1, seq_len >= 1 and seq_len is divisible
/// by ranks (by 2*ranks for zigzag).
void check_layout(layout value, std::int64_t seq_len, int ranks);

/// Global token positions held by `rank`, sorted ascending; seq_len / ranks of them.
/// Validates with check_layout and 0 <= rank < ranks. `balanced` depends on the mask: ask
/// mask_layout_positions (kernels/mask_layout.hpp); here it is a config_error.
std::vector<std::int64_t> layout_positions(layout value, std::int64_t seq_len, int ranks, int rank);

/// Copy rows `pos` of global [outer, seq_len, dim] into local [outer, pos.size(), dim]
/// (outer = batch * heads). Caller owns both buffers.
void scatter_rows(const float* global, std::int64_t outer, std::int64_t seq_len, std::int64_t dim,
                  const std::vector<std::int64_t>& pos, float* local);

/// Inverse of scatter_rows: write local [outer, pos.size(), dim] into rows `pos` of global
/// [outer, seq_len, dim]; other global rows are left untouched.
void gather_rows(const float* local, std::int64_t outer, std::int64_t seq_len, std::int64_t dim,
                 const std::vector<std::int64_t>& pos, float* global);

/// Ring schedule: at step s (0-based) rank r holds the K/V block that originated at
/// rank (r - s) mod P.
inline int ring_source_rank(int rank, int step, int ranks) {
    const int s = step % ranks;
    return (rank - s + ranks) % ranks;
}

/// Rank that `rank` sends its current K/V block to (the next rank on the ring).
inline int ring_next(int rank, int ranks) {
    return (rank + 1) % ranks;
}

/// Rank that `rank` receives the next K/V block from (the previous rank on the ring).
inline int ring_prev(int rank, int ranks) {
    return (rank - 1 + ranks) % ranks;
}

/// Classify a block from its sorted positions: visible when every key is visible to every
/// query (always when !causal), masked when none is (or either side is empty), else partial.
inline block_mask classify_block(const std::int64_t* q_pos, std::int64_t q_count,
                                 const std::int64_t* k_pos, std::int64_t k_count, bool causal) {
    if (q_count <= 0 || k_count <= 0)
        return block_mask::masked;
    if (!causal || k_pos[k_count - 1] <= q_pos[0])
        return block_mask::visible;
    if (k_pos[0] > q_pos[q_count - 1])
        return block_mask::masked;
    return block_mask::partial;
}

/// Number of (query, key) pairs with k_pos[j] <= q_pos[i] (all pairs when !causal).
std::int64_t visible_pairs(const std::vector<std::int64_t>& q_pos,
                           const std::vector<std::int64_t>& k_pos, bool causal);

} // namespace ringscale::kernels
