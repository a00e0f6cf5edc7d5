// Device pieces of the sm_90a attention forward (attention_fwd_sm90.cu): tile sizes, the
// shared-memory plan, and the consumer warpgroup's register work (masking, online softmax,
// P packing, the final merge into the running O/LSE). The math is the sm80 kernel's
// (attention_fwd.cu) on the wgmma accumulator layout, which repeats the mma.sync C fragment
// over the tile's columns (sm90_primitives.cuh). Include from .cu files only.
// Compile-checked; NOT YET RUN ON A GPU.
#pragma once

#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/cuda/attention_fwd_sm90_plan.hpp"
#include "kernels/cuda/sm90_primitives.cuh"

#include <cstdint>

namespace ringscale::kernels::cuda::sm90 {

/// Block shape: 128 query rows (two consumer warpgroups of 64) against key tiles of 128,
/// K and V double-buffered; one producer warpgroup issues the TMA loads.
template <int D>
struct fwd_cfg {
    using L = fwd90::layout<D>; // sizes and offsets: attention_fwd_sm90_plan.hpp
    static constexpr int rows = fwd90::rows;
    static constexpr int keys = fwd90::keys;
    static constexpr int stages = fwd90::stages;
    static constexpr int threads = 384;              // producer warpgroup + two consumers
    static constexpr int col_blocks = L::col_blocks; // 128-byte swizzle atoms: 64 elements
    static constexpr int q_bytes = L::q_bytes;
    static constexpr int kv_bytes = L::kv_bytes; // one K or one V tile
    static constexpr int tiles_bytes = L::tiles_bytes;
    static constexpr int smem_bytes = L::smem_bytes; // + alignment + barriers
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

/// Shared memory of a block, carved from the dynamic allocation rounded up to 1024 bytes
/// (the 128-byte swizzle atom's alignment): Q, then the K and V stages, each tile stored as
/// its 64-column blocks one after the other ([D / 64][rows][64], as TMA writes them), then
/// the barriers. Addresses are computed, not kept in arrays: an array of pointers indexed by
/// a run-time stage would live on the stack.
template <typename T, int D>
struct fwd_smem {
    using cfg = fwd_cfg<D>;
    unsigned char* base;

    __device__ explicit fwd_smem(unsigned char* raw)
        : base(reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) &
                                                ~std::uintptr_t{1023})) {}
    __device__ unsigned char* bytes(int offset) const { return base + offset; }
    __device__ T* q() const { return reinterpret_cast<T*>(base + cfg::L::q); }
    __device__ T* k(int s) const { return reinterpret_cast<T*>(base + cfg::L::k(s)); }
    __device__ T* v(int s) const { return reinterpret_cast<T*>(base + cfg::L::v(s)); }
    __device__ fwd_barriers<cfg::stages>* bar() const {
        return reinterpret_cast<fwd_barriers<cfg::stages>*>(base + cfg::tiles_bytes);
    }
};

/// A consumer warpgroup as one of its threads sees it: 64 rows from r0, this warp's 16 from
/// w0, the positions of the first and last live row.
struct fwd_wg {
    int lane;
    std::int64_t r0, w0, first, last;
    bool live;
};

__device__ __forceinline__ fwd_wg make_fwd_wg(const fwd_params& p, std::int64_t i0, int wg) {
    fwd_wg w;
    const int tid = static_cast<int>(threadIdx.x) - 128 * (wg + 1);
    w.lane = tid % 32;
    w.r0 = i0 + 64 * wg;
    w.w0 = w.r0 + 16 * (tid / 32);
    w.live = w.r0 < p.q_len;
    const std::int64_t r_last = min(w.r0 + 63, p.q_len - 1);
    w.first = w.live ? attn::position_at(p.pos.q_pos, p.pos.q_first, w.r0) : 0;
    w.last = w.live ? attn::position_at(p.pos.q_pos, p.pos.q_first, r_last) : 0;
    return w;
}

/// Key tiles the warpgroup computes: the leading ones whose first key some row sees (keys
/// and rows are sorted, so every later tile is unseen too).
template <int keys>
__device__ __forceinline__ int fwd_tiles_seen(const fwd_params& p, const fwd_wg& w, int tiles) {
    if (!w.live)
        return 0;
    if (!p.causal)
        return tiles;
    const std::int64_t n = attn::count_at_most(p.pos.k_pos, p.pos.k_first, p.k_len, w.last);
    return min(tiles, static_cast<int>((n + keys - 1) / keys));
}

/// True when every key of the tile at j0 exists and every row of the warpgroup sees it.
template <int keys>
__device__ __forceinline__ bool fwd_tile_full(const fwd_params& p, const fwd_wg& w,
                                              std::int64_t j0) {
    return j0 + keys <= p.k_len &&
           (!p.causal || attn::position_at(p.pos.k_pos, p.pos.k_first, j0 + keys - 1) <= w.first);
}

/// Issue S = Q K^T for consumer warpgroup wg's 64 rows of the Q tile `sq` against the key
/// tile in `sk` (both K-major, D / 16 steps, each 32 bytes further into a 64-column block;
/// offsets from attention_fwd_sm90_plan.hpp) as one wgmma group. The caller fences before and
/// waits after.
template <typename T, int D>
__device__ __forceinline__ void fwd_scores_issue(float (&s)[fwd_cfg<D>::keys / 2], const T* sq,
                                                 int wg, const T* sk) {
    using cfg = fwd_cfg<D>;
    const auto* q = reinterpret_cast<const unsigned char*>(sq);
    const auto* k = reinterpret_cast<const unsigned char*>(sk);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        const std::uint64_t da = wgmma_desc_k_major(q + fwd90::scores_a_offset(kk, wg));
        const std::uint64_t db = wgmma_desc_k_major(k + fwd90::scores_b_offset(kk));
        wgmma_ss<cfg::keys, T>(s, da, db, kk > 0 ? 1 : 0);
    }
    wgmma_commit();
}

/// Issue O += P V as one wgmma group: V MN-major (d contiguous; 64-column blocks keys * 128
/// bytes apart), 16 keys (2048 bytes) per step. The caller fences before and waits after.
template <typename T, int D>
__device__ __forceinline__ void
fwd_pv_issue(float (&o)[D / 2], const std::uint32_t (&pa)[fwd_cfg<D>::keys / 16][4], const T* sv) {
    using cfg = fwd_cfg<D>;
    const auto* v = reinterpret_cast<const unsigned char*>(sv);
#pragma unroll
    for (int kk = 0; kk < cfg::keys / 16; ++kk) {
        const std::uint64_t db = wgmma_desc_mn_major(v + fwd90::pv_b_offset(kk), fwd90::pv_lbo());
        wgmma_rs<D, T, 1>(o, pa[kk], db, 1);
    }
    wgmma_commit();
}

/// Stage s no longer read by this warp: one arrival per consumer warp.
__device__ __forceinline__ void fwd_release(std::uint64_t* empty, int lane) {
    __syncwarp();
    if (lane == 0)
        mbarrier_arrive(empty);
}

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

/// Online softmax on raw scores: new running max (log2 units), S -> P in place (exp2) and the
/// partial row sums; alpha receives the factor O must be rescaled by (fwd_rescale_o), kept
/// apart so O can still be owned by an in-flight wgmma. Same arithmetic as the sm80 kernel.
template <int D, int keys>
__device__ __forceinline__ void fwd_softmax(float (&s)[keys / 2], fwd_rows_state<D>& st,
                                            float scale_log2, float (&alpha)[2]) {
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < keys / 8; ++n) {
        tile_max[0] = fmaxf(tile_max[0], fmaxf(s[4 * n], s[4 * n + 1]));
        tile_max[1] = fmaxf(tile_max[1], fmaxf(s[4 * n + 2], s[4 * n + 3]));
    }
    float base[2], sum[2] = {0.0f, 0.0f};
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
}

/// O *= alpha per row (accumulator layout: entries 4n, 4n+1 row g; 4n+2, 4n+3 row g+8).
template <int D>
__device__ __forceinline__ void fwd_rescale_o(fwd_rows_state<D>& st, const float (&alpha)[2]) {
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
/// the sm80 kernel does (attn::merge_rows_out): rows that saw no key of this block are left
/// untouched. `w0` is the warp's first query row.
template <int D>
__device__ __forceinline__ void fwd_merge(const fwd_params& p, fwd_rows_state<D>& st,
                                          std::int64_t bh, std::int64_t w0, int lane) {
    attn::merge_rows_out<D>(p.o + bh * p.q_len * D, p.lse + bh * p.q_len, p.q_len, st.row_max,
                            st.row_sum, w0, lane, [&](int n, int i) { return st.o[4 * n + i]; });
}

} // namespace ringscale::kernels::cuda::sm90
