// Device pieces of the Hopper (sm_90a) attention backward (attention_bwd_sm90.cu): tile
// sizes, the shared-memory map, and the per-tile steps of a consumer warpgroup. Names CUDA
// types: include it from .cu files only. Built on sm90_primitives.cuh (wgmma, mbarrier,
// TMA); adds nothing below the level of those primitives. NOT YET RUN ON A GPU.
//
// Geometry (attention_bwd_sm90_plan.hpp). A block (CTA) owns keys = 128 keys of one (batch,
// kv head) and walks the query tiles (rows = 64) of every query head of the GQA group, as the sm_80
// kernel does. Warpgroup 0 is the producer (one warp: TMA and the per-row statistics);
// warpgroups 1 and 2 are consumers, each owning 64 of the keys (its "key half", w = 0, 1)
// and keeping their dK, dV [64 x D] in registers over the whole walk. Per query tile a
// consumer computes, with M = its 64 keys:
//   S^T  = K_w Q^T   (SS, N = 64 queries)      dP^T = V_w dO^T (SS)
//   P^T  = exp2(S^T * scale * log2e - LSE * log2e), masked;  dS^T = P^T (dP^T - delta) scale
//   dV  += P^T dO    (RS: P^T repacked from the accumulators, N = D, dO MN-major)
//   dK  += dS^T Q    (RS, Q MN-major)
//   dQ   = dS K      (SS, dS^T from shared memory read MN-major, K MN-major; N = 64), added
//                    to global fp32 dQ with vector atomics.
// D = 128: dQ needs all 128 keys, so both consumers write their dS^T halves to one buffer
// and each computes 64 of the 128 dQ columns. D = 64: each consumer computes all 64 columns
// over its own 64 keys, and both add (no cross-warpgroup barrier). The dS^T buffer is
// double-buffered by step, so one named barrier per step orders its writes and reads.
#pragma once

#include "kernels/cuda/attention_bwd_sm90_plan.hpp"
#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/cuda/sm90_primitives.cuh"

#include <cstdint>

namespace ringscale::kernels::cuda::bwd90 {

/// Kernel arguments other than the tensor maps of Q, K, V, dO.
struct params {
    const float* lse;
    const float* delta;
    float* dq;
    float* dk;
    float* dv;
    attention_positions pos;
    std::int64_t heads, kv_heads, q_len, k_len;
    float scale, scale_log2;
    bool causal;
};

/// Query rows [i_first, q_len) can see a key of the block starting at key j0 (all rows when
/// not causal); the walk covers the 64-row tiles from i_first / 64 on, for every query head.
__device__ __forceinline__ std::int64_t first_visible_row(const params& p, std::int64_t j0) {
    if (!p.causal)
        return 0;
    const std::int64_t first_key_pos = attn::position_at(p.pos.k_pos, p.pos.k_first, j0);
    return attn::count_at_most(p.pos.q_pos, p.pos.q_first, p.q_len, first_key_pos - 1);
}

/// Views of one stage's per-row statistics, written by the producer warp.
struct stage_stats {
    float* lse2;        // LSE * log2e; +inf where no gradient flows (LSE -inf, rows >= q_len)
    float* delta;       // rowsum(dO * O); 0 past q_len
    std::int64_t* qpos; // position of the row (of the last valid row past q_len)
    __device__ explicit stage_stats(unsigned char* base)
        : lse2(reinterpret_cast<float*>(base)), delta(lse2 + rows),
          qpos(reinterpret_cast<std::int64_t*>(base + 2 * rows * sizeof(float))) {}
};

/// Facts about the consumer warpgroup's 64 keys ("half") for the per-tile mask decision.
struct key_half {
    std::int64_t last_pos; // position of the half's last valid key
    bool full;             // all 64 keys of the half are < k_len
};

/// Store the masking positions of the half's keys to shared memory (int64 [64] at key_pos):
/// a valid key's position when causal, INT64_MIN when not (never masked), INT64_MAX past
/// k_len (always masked), so "masked" is one compare, position > query position. Kept in
/// shared memory rather than registers: the consumers' registers are full. Each warp
/// stores and later reads only its own 16 rows (then __syncwarp suffices).
__device__ __forceinline__ key_half store_key_pos(const params& p, std::int64_t* key_pos,
                                                  std::int64_t half0, int warp, int lane) {
    if (lane < 16) {
        const std::int64_t key = half0 + 16 * warp + lane;
        std::int64_t eff = INT64_MAX;
        if (key < p.k_len)
            eff = p.causal ? attn::position_at(p.pos.k_pos, p.pos.k_first, key) : INT64_MIN;
        key_pos[16 * warp + lane] = eff;
    }
    __syncwarp();
    key_half kh;
    const std::int64_t last = min(half0 + 63, p.k_len - 1);
    kh.last_pos = last >= half0 ? attn::position_at(p.pos.k_pos, p.pos.k_first, last) : 0;
    kh.full = half0 + 64 <= p.k_len;
    return kh;
}

/// P^T in place over S^T, dS^T in place over dP^T (both m64n64 accumulators: element i is
/// key row g + 8 ((i / 2) % 2) of the warp, query column 8 (i / 4) + 2 t + i % 2).
/// `masked` applies the key-validity and causal masks (partial tiles only) from key_pos
/// (store_key_pos: the half's 64 masking positions).
__device__ __forceinline__ void probs_and_ds(const params& p, float (&s)[32], float (&dp)[32],
                                             const stage_stats& st, const std::int64_t* key_pos,
                                             bool masked, int warp, int lane) {
    std::int64_t kpos[2] = {INT64_MIN, INT64_MIN};
    if (masked) {
        kpos[0] = key_pos[16 * warp + lane / 4];
        kpos[1] = key_pos[16 * warp + lane / 4 + 8];
    }
#pragma unroll
    for (int i = 0; i < 32; ++i) {
        const int col = 8 * (i / 4) + 2 * (lane % 4) + (i & 1);
        // lse2 is +inf for rows with no gradient (and rows past q_len): exp2(-inf) = 0.
        float x = exp2f(s[i] * p.scale_log2 - st.lse2[col]);
        if (masked && kpos[(i / 2) & 1] > st.qpos[col])
            x = 0.0f;
        s[i] = x;
        dp[i] = x * (dp[i] - st.delta[col]) * p.scale;
    }
}

/// Repack an m64n64 fp32 accumulator (this thread's 32 values) as the four k16 A fragments
/// of an RS wgmma with K = 64 (attention_device.cuh, pack_a: the same per-warp layout).
template <typename T>
__device__ __forceinline__ void pack_k64(std::uint32_t (&a)[4][4], const float (&x)[32]) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        a[kk][0] = attn::pack2<T>(x[8 * kk + 0], x[8 * kk + 1]);
        a[kk][1] = attn::pack2<T>(x[8 * kk + 2], x[8 * kk + 3]);
        a[kk][2] = attn::pack2<T>(x[8 * kk + 4], x[8 * kk + 5]);
        a[kk][3] = attn::pack2<T>(x[8 * kk + 6], x[8 * kk + 7]);
    }
}

/// Store this thread's dS^T values (already packed, a[kk] as from pack_k64) into the dS^T
/// buffer [128 keys][64 queries], 128-byte swizzled, rows of key half `w`: the layout an
/// MN-major wgmma A operand (dS, M = queries contiguous) reads. Conflict-free: the 8 rows of
/// a warp's store land in 8 different 16-byte chunks.
__device__ __forceinline__ void store_ds(unsigned char* ds, const std::uint32_t (&a)[4][4], int w,
                                         int warp, int lane) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int h = 0; h < 2; ++h) // column block j = 2 kk + h
#pragma unroll
            for (int r = 0; r < 2; ++r)
                *reinterpret_cast<std::uint32_t*>(
                    ds + ds_store_offset(w, warp, lane, 2 * kk + h, r)) = a[kk][2 * h + r];
}

/// S^T = K_w Q^T and dP^T = V_w dO^T for key half w over D (both K-major SS wgmmas).
template <typename T, int D>
__device__ __forceinline__ void scores(float (&s)[32], float (&dp)[32], unsigned char* sm, int w,
                                       int stage) {
    using L = layout<D>;
    sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        const int a_off = k_major_offset(kk, 64 * w, keys);
        const int b_off = stage * L::q_tile + k_major_offset(kk, 0, rows);
        sm90::wgmma_ss<64, T>(s, sm90::wgmma_desc_k_major(sm + L::k + a_off),
                              sm90::wgmma_desc_k_major(sm + L::q + b_off), kk > 0);
    }
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        const int a_off = k_major_offset(kk, 64 * w, keys);
        const int b_off = stage * L::q_tile + k_major_offset(kk, 0, rows);
        sm90::wgmma_ss<64, T>(dp, sm90::wgmma_desc_k_major(sm + L::v + a_off),
                              sm90::wgmma_desc_k_major(sm + L::d_o + b_off), kk > 0);
    }
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
    sm90::wgmma_fence_operand(s);
    sm90::wgmma_fence_operand(dp);
}

/// dV += P^T dO, dK += dS^T Q (RS, K = the tile's 64 queries) and dq = dS K (SS), one
/// wgmma group. D = 128: dq columns 64 w.. over all 128 keys; D = 64: all columns over the
/// half's keys.
template <typename T, int D>
__device__ __forceinline__ void grads(float (&dv)[D / 2], float (&dk)[D / 2], float (&dq)[32],
                                      const std::uint32_t (&pa)[4][4],
                                      const std::uint32_t (&dsa)[4][4], unsigned char* sm,
                                      const unsigned char* ds, int w, int stage) {
    using L = layout<D>;
    sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) // MN-major B: the k-step's 16 query rows
        sm90::wgmma_rs<D, T, 1>(
            dv, pa[kk],
            sm90::wgmma_desc_mn_major(sm + L::d_o + stage * L::q_tile + mn_major_offset(kk, 0),
                                      col_block_offset(1, rows)),
            1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
        sm90::wgmma_rs<D, T, 1>(
            dk, dsa[kk],
            sm90::wgmma_desc_mn_major(sm + L::q + stage * L::q_tile + mn_major_offset(kk, 0),
                                      col_block_offset(1, rows)),
            1);
    constexpr int dq_steps = D == 128 ? keys / 16 : 4;
    const int key0 = D == 128 ? 0 : 64 * w; // first key row of the dQ reduction
    const int k_block =
        D == 128 ? col_block_offset(w, keys) : 0; // K's 64-column block of dq's columns
#pragma unroll
    for (int kk = 0; kk < dq_steps; ++kk) {
        const int row_off = mn_major_offset(kk, key0);
        sm90::wgmma_ss<64, T, 1, 1>(
            dq, sm90::wgmma_desc_mn_major(ds + row_off, col_block_offset(1, keys)),
            sm90::wgmma_desc_mn_major(sm + L::k + k_block + row_off, col_block_offset(1, keys)),
            kk > 0);
    }
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
    sm90::wgmma_fence_operand(dv);
    sm90::wgmma_fence_operand(dk);
    sm90::wgmma_fence_operand(dq);
}

/// Add an m64n64 dQ accumulator (rows: the tile's 64 queries; columns col0.. col0 + 63) to
/// global fp32 dQ rows of head `bh` with 8-byte vector atomics; rows >= q_len are skipped.
template <int D>
__device__ __forceinline__ void add_dq(const params& p, const float (&acc)[32], std::int64_t bh,
                                       std::int64_t i0, int col0, int warp, int lane) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const std::int64_t row = i0 + 16 * warp + lane / 4 + 8 * r;
        if (row >= p.q_len)
            continue;
        float* out = p.dq + (bh * p.q_len + row) * D + col0 + 2 * (lane % 4);
#pragma unroll
        for (int j = 0; j < 8; ++j)
            atomicAdd(reinterpret_cast<float2*>(out + 8 * j),
                      make_float2(acc[4 * j + 2 * r], acc[4 * j + 2 * r + 1]));
    }
}

/// Add an m64nD accumulator (dK or dV of the half's 64 keys) to global rows of kv row
/// `kv_row`; rows >= k_len are skipped. One writer per row: plain read-modify-write.
template <int D>
__device__ __forceinline__ void add_rows(const params& p, float* out, const float (&acc)[D / 2],
                                         std::int64_t kv_row, std::int64_t half0, int warp,
                                         int lane) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const std::int64_t key = half0 + 16 * warp + lane / 4 + 8 * r;
        if (key >= p.k_len)
            continue;
        float* row = out + (kv_row * p.k_len + key) * D + 2 * (lane % 4);
#pragma unroll
        for (int j = 0; j < D / 8; ++j) {
            float2 x = *reinterpret_cast<const float2*>(row + 8 * j);
            x.x += acc[4 * j + 2 * r];
            x.y += acc[4 * j + 2 * r + 1];
            *reinterpret_cast<float2*>(row + 8 * j) = x;
        }
    }
}

} // namespace ringscale::kernels::cuda::bwd90
