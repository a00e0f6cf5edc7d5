// Sharding a masked sequence over the ranks so each gets a fair share of the visible work:
// zigzag per document (each document cut into 2P chunks, rank r holding chunks r and 2P-1-r
// of every one, as ring-flash-attention's varlen zigzag does), and the balanced layout (the
// sequence cut into units, the sparse block or S/(4P) tokens, dealt greedily, costliest
// first, to the rank with the least work that still has room). Other layouts as
// kernels/layout.hpp has them.
#pragma once

#include "kernels/layout.hpp"
#include "kernels/mask_spec.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::kernels {

/// Throws config_error (one line) unless `value` can shard `seq_len` tokens masked by `mask`
/// (may be null) over `ranks`: check_layout's rules; zigzag with documents needs every
/// document's length divisible by 2P; balanced needs seq_len divisible by P units.
void check_mask_layout(layout value, std::int64_t seq_len, int ranks, const attention_mask* mask);

/// Every rank's global positions, sorted, seq_len / ranks each ([ranks][...]): zigzag per
/// document when the mask has documents, the balanced layout for `balanced` (work counted
/// under `causal` and the mask), otherwise layout_positions. Validates with
/// check_mask_layout.
std::vector<std::vector<std::int64_t>> mask_layout_positions(layout value, std::int64_t seq_len,
                                                             int ranks, bool causal,
                                                             const attention_mask* mask);

} // namespace ringscale::kernels
