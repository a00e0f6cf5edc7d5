// Device pieces of the sm_90a attention forward (attention_fwd_sm90.cu): tile sizes, the
// shared-memory plan, and the consumer warpgroup's register work (masking, online softmax,
// P packing, the final merge into the running O/LSE). The math is the sm80 kernel's
// (attention_fwd.cu) on the wgmma accumulator layout, which repeats the mma.sync C fragment
// over the tile's columns (sm90_primitives.cuh). Include from .cu files only.
// Compile-checked; NOT YET RUN ON A GPU.
#pragma once

#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/cuda/sm90_primitives.cuh"

#include <cstdint>

namespace ringscale::kernels::cuda::sm90 {

/// Block shape: 128 query rows (two consumer warpgroups of 64) against key tiles of 128,
/// K and V double-buffered; one producer warpgroup issues the TMA loads.
template <int D>
struct fwd_cfg {
    static constexpr int rows = 128;
    static constexpr int keys = 128;
    static constexpr int stages = 2;
    static constexpr int threads = 384;       // producer warpgroup + two consumers
    static constexpr int col_blocks = D / 64; // 128-byte swizzle atoms are 64 elements wide
    static constexpr int q_bytes = rows * D * 2;
    static constexpr int kv_bytes = keys * D * 2; // one K or one V tile
    static constexpr int tiles_bytes = q_bytes + 2 * stages * kv_bytes;
    static constexpr int smem_bytes = tiles_bytes + 1024 + 128; // + alignment + barriers
    static constexpr int producer_regs = 24;
    static constexpr int consumer_regs = 240;
};

/// Everything but the tensors (those travel as TMA descriptors).
struct fwd_params {
    float* o;
    float* lse;
    attention_positions pos;
    std::int64_t heads, kv_heads, q_len, k_len;
    float scale_log2; // softmax scale * log2(e)
    bool causal;
};

/// mbarriers of one block: Q loaded; K / V of stage s loaded; stage s released by the
/// consumers (one arrival per consumer warp).
template <int stages>
struct fwd_barriers {
    std::uint64_t q_full;
    std::uint64_t k_full[stages];
    std::uint64_t v_full[stages];
    std::uint64_t empty[stages];
};

/// A consumer thread's running state for its two rows (g and g + 8 of its warp's 16).
template <int D>
struct fwd_rows_state {
    float o[D / 2]; // unnormalised O, accumulator layout
    float row_max[2];
    float row_sum[2];
    std::int64_t row_pos[2];
};

/// -inf where key j0 + column is beyond k_len or, causally, not visible to the row.
template <int keys>
__device__ __forceinline__ void fwd_mask(const fwd_params& p, float (&s)[keys / 2], std::int64_t j0,
                                         const std::int64_t (&row_pos)[2], int lane) {
#pragma unroll
    for (int n = 0; n < keys / 8; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const std::int64_t j = j0 + n * 8 + 2 * (lane % 4) + c;
            const bool valid = j < p.k_len;
            const std::int64_t kp = valid ? attn::position_at(p.pos.k_pos, p.pos.k_first, j) : 0;
            if (!valid || (p.causal && kp > row_pos[0]))
                s[4 * n + c] = -INFINITY;
            if (!valid || (p.causal && kp > row_pos[1]))
                s[4 * n + 2 + c] = -INFINITY;
        }
}

/// Online softmax on raw scores: new running max (log2 units), S -> P in place (exp2), the
/// partial row sums and O rescaled. Same arithmetic as the sm80 kernel.
template <int D, int keys>
__device__ __forceinline__ void fwd_softmax(float (&s)[keys / 2], fwd_rows_state<D>& st,
                                            float scale_log2) {
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < keys / 8; ++n) {
        tile_max[0] = fmaxf(tile_max[0], fmaxf(s[4 * n], s[4 * n + 1]));
        tile_max[1] = fmaxf(tile_max[1], fmaxf(s[4 * n + 2], s[4 * n + 3]));
    }
    float alpha[2], base[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
        tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
        const float m_new = fmaxf(st.row_max[r], tile_max[r] * scale_log2);
        base[r] = m_new == -INFINITY ? 0.0f : m_new; // nothing visible yet: exp2 gives 0
        alpha[r] = exp2f(st.row_max[r] - base[r]);
        st.row_max[r] = m_new;
    }
#pragma unroll
    for (int k = 0; k < keys / 2; ++k) {
        s[k] = exp2f(fmaf(s[k], scale_log2, -base[(k / 2) % 2]));
        sum[(k / 2) % 2] += s[k];
    }
#pragma unroll
    for (int r = 0; r < 2; ++r)
        st.row_sum[r] = st.row_sum[r] * alpha[r] + sum[r];
#pragma unroll
    for (int k = 0; k < D / 2; ++k)
        st.o[k] *= alpha[(k / 2) % 2];
}

/// P (fp32 accumulator layout) -> A fragments of the P V wgmma, one per 16 keys.
template <typename T, int keys>
__device__ __forceinline__ void fwd_pack_p(std::uint32_t (&a)[keys / 16][4],
                                           const float (&s)[keys / 2]) {
#pragma unroll
    for (int kk = 0; kk < keys / 16; ++kk)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            a[kk][i] = attn::pack2<T>(s[8 * kk + 2 * i], s[8 * kk + 2 * i + 1]);
}

/// Normalise and merge the thread's two rows into the running (O, LSE) in global memory, as
/// the sm80 kernel's fwd_merge_out: rows that saw no key of this block are left untouched.
/// `w0` is the warp's first query row.
template <int D>
__device__ __forceinline__ void fwd_merge(const fwd_params& p, fwd_rows_state<D>& st,
                                          std::int64_t bh, std::int64_t w0, int lane) {
    float old_lse[2];
    bool live[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        st.row_sum[r] += __shfl_xor_sync(0xffffffffu, st.row_sum[r], 1);
        st.row_sum[r] += __shfl_xor_sync(0xffffffffu, st.row_sum[r], 2);
        const std::int64_t row = w0 + lane / 4 + 8 * r;
        live[r] = row < p.q_len && st.row_sum[r] > 0.0f;
        old_lse[r] = live[r] ? p.lse[bh * p.q_len + row] : -INFINITY;
    }
    __syncwarp(); // the quad has read each row's old LSE before lane 4g writes it
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (!live[r])
            continue;
        const std::int64_t row = bh * p.q_len + w0 + lane / 4 + 8 * r;
        const float blk = (st.row_max[r] + log2f(st.row_sum[r])) * attn::ln2;
        const float hi = fmaxf(old_lse[r], blk), lo = fminf(old_lse[r], blk);
        const float lse = hi + log1pf(expf(lo - hi));
        const bool seen = old_lse[r] != -INFINITY;
        const float w_old = seen ? expf(old_lse[r] - lse) : 0.0f;
        const float w_blk = expf(blk - lse) / st.row_sum[r];
        float* o = p.o + row * D + 2 * (lane % 4);
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            float2 prev = seen ? *reinterpret_cast<const float2*>(o + n * 8) : float2{0.0f, 0.0f};
            prev.x = w_old * prev.x + w_blk * st.o[4 * n + 2 * r];
            prev.y = w_old * prev.y + w_blk * st.o[4 * n + 2 * r + 1];
            *reinterpret_cast<float2*>(o + n * 8) = prev;
        }
        if (lane % 4 == 0)
            p.lse[row] = lse;
    }
}

} // namespace ringscale::kernels::cuda::sm90
