// Device pieces of the sm80 attention kernels under a mask beyond causal (attention_fwd.cu,
// attention_bwd.cu, their `masked` instantiations): the rows of a call whose positions lie
// in a range, and the per-element pass over a forward warp tile's scores. The tile logic
// itself is kernels/mask_tiles.hpp (host and device, unit-tested on the CPU). Names CUDA
// types: include it from .cu files only.
#pragma once

#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/mask_tiles.hpp"

#include "src/base/error.hpp"

#include <cstdint>
#include <string>

namespace ringscale::kernels::cuda::attn {

/// Host check before a masked launch: the mask's arrays must have their device copies
/// (kernels/dev_mask.hpp); the kernels never read the host pointers. Throws config_error
/// naming `who`.
inline void check_mask_launch(const char* who, const mask_view& m) {
    RINGSCALE_REQUIRE((m.docs == 0 || m.doc_start_dev) && (m.block == 0 || m.keep_dev),
                      std::string(who) + ": the mask's document starts and kept blocks must be "
                                         "in device memory (kernels::dev_mask)");
}

/// Rows [begin, end) of one side of a call (positions ptr, or first, first + 1, ... when ptr
/// is nullptr; n rows) whose positions lie in r.
__device__ __forceinline__ row_span rows_within(const std::int64_t* ptr, std::int64_t first,
                                                std::int64_t n, const key_range& r) {
    return mask_rows_within(
        r, n, [&](std::int64_t limit) { return count_at_most(ptr, first, n, limit); });
}

/// The key rows [begin, end) of a call that its query rows [i0, i_last] may see under `m`.
__device__ __forceinline__ row_span mask_key_rows(const mask_view& m, bool causal,
                                                  const attention_positions& pos,
                                                  std::int64_t k_len, std::int64_t i0,
                                                  std::int64_t i_last) {
    const key_range keys = mask_keys_of_rows(m, causal, position_at(pos.q_pos, pos.q_first, i0),
                                             position_at(pos.q_pos, pos.q_first, i_last));
    return rows_within(pos.k_pos, pos.k_first, k_len, keys);
}

/// A forward warp tile's decision under `m` (mask_tile): query rows at positions [w_first,
/// w_last] against the `keys` key rows from j0 (ragged past k_len).
template <int keys>
__device__ __forceinline__ block_mask mask_key_tile(const mask_view& m, bool causal,
                                                    const attention_positions& pos,
                                                    std::int64_t k_len, std::int64_t w_first,
                                                    std::int64_t w_last, std::int64_t j0) {
    const std::int64_t j_last = (j0 + keys < k_len ? j0 + keys : k_len) - 1;
    return mask_tile(m, causal, w_first, w_last, position_at(pos.k_pos, pos.k_first, j0),
                     position_at(pos.k_pos, pos.k_first, j_last), j0 + keys > k_len);
}

/// Mask the raw scores of a partial forward warp tile under `m`: s[n][i] is row r = i / 2
/// (position row_pos[r]) against key j0 + 8 n + 2 (lane % 4) + i % 2; -inf where that key is
/// past k_len or not visible to the row. Each row's key range is computed once.
template <int nblocks>
__device__ __forceinline__ void mask_tile_scores(const mask_view& m, bool causal,
                                                 const attention_positions& pos, std::int64_t k_len,
                                                 float (&s)[nblocks][4], std::int64_t j0,
                                                 const std::int64_t (&row_pos)[2], int lane) {
    const key_range range[2] = {mask_row_range(m, causal, row_pos[0]),
                                mask_row_range(m, causal, row_pos[1])};
#pragma unroll
    for (int n = 0; n < nblocks; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const std::int64_t j = j0 + n * 8 + 2 * (lane % 4) + c;
            const bool valid = j < k_len;
            const std::int64_t kp = valid ? position_at(pos.k_pos, pos.k_first, j) : 0;
#pragma unroll
            for (int r = 0; r < 2; ++r)
                if (!valid || !mask_visible_in(m, range[r], row_pos[r], kp))
                    s[n][2 * r + c] = -INFINITY;
        }
}

} // namespace ringscale::kernels::cuda::attn
