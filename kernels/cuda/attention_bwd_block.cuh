// The sm80 attention backward's thread block (attention_bwd.cu): its sizes, parameters,
// shared-memory layout and the per-thread facts about its key rows. Internal to
// attention_bwd.cu; names CUDA types.
#pragma once

#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_fwd.cuh"

#include <cstdint>
#include <type_traits>

namespace ringscale::kernels::cuda::attn {

// A block owns 64 keys of one (batch, kv head), 16 per warp, keeps their dK and dV in
// registers, and walks the query tiles (64 rows) of every query head of the group. Each warp
// computes the transposed products for its keys (S^T = K Q^T, dP^T = V dO^T), so P^T and dS^T
// sit in accumulator registers and re-pack as A operands of dV += P^T dO and dK += dS^T Q.
// dQ = dS K needs all 64 keys of a query row: dS^T goes through shared memory and each warp
// then owns 16 query rows, adding its share to dQ with atomics. Under a mask beyond causal
// (`masked`; kernels/mask_tiles.hpp) a block walks only the query tiles that may see its
// keys, and each warp skips, takes whole or masks per element each tile as mask_tile says.
constexpr int bwd_warps = 4;
constexpr int bwd_threads = bwd_warps * 32;
constexpr int bwd_keys = bwd_warps * 16;
constexpr int bwd_rows = 64;

struct bwd_params {
    const void* q;
    const void* k;
    const void* v;
    const void* d_o;
    const float* lse;
    const float* delta;
    float* dq;
    float* dk;
    float* dv;
    attention_positions pos;
    std::int64_t heads, kv_heads, q_len, k_len;
    float scale;
    float scale_log2;
    bool causal;
};

// The masked instantiation's parameters: the mask rides beside, so the unmasked kernel's
// parameters (and its register allocation) stay as they were.
struct bwd_masked_params : bwd_params {
    mask_view mask; // device arrays
};

template <bool masked>
using bwd_args = std::conditional_t<masked, bwd_masked_params, bwd_params>;

/// Shared memory of one block: K, V (its keys), Q, dO (the query tile), dS^T [keys][rows] and,
/// per query row, its LSE in log2 units (+inf where no gradient flows), delta and position;
/// masked, also the row's key range under the mask (mask_row_range).
template <typename T, int D, bool masked>
struct bwd_smem {
    T* k;
    T* v;
    T* q;
    T* d_o;
    T* ds;
    float* lse2;
    float* delta;
    std::int64_t* qpos;
    std::int64_t* key_lo = nullptr; // masked only
    std::int64_t* key_hi = nullptr;

    static constexpr int bytes =
        ((2 * bwd_keys + 2 * bwd_rows) * D + bwd_keys * bwd_rows) * static_cast<int>(sizeof(T)) +
        bwd_rows * static_cast<int>(2 * sizeof(float) + (masked ? 3 : 1) * sizeof(std::int64_t));

    __device__ explicit bwd_smem(unsigned char* raw) {
        k = reinterpret_cast<T*>(raw);
        v = k + bwd_keys * D;
        q = v + bwd_keys * D;
        d_o = q + bwd_rows * D;
        ds = d_o + bwd_rows * D;
        qpos = reinterpret_cast<std::int64_t*>(ds + bwd_keys * bwd_rows); // 8-byte aligned
        lse2 = reinterpret_cast<float*>(qpos + bwd_rows);
        delta = lse2 + bwd_rows;
        if constexpr (masked) {
            key_lo = reinterpret_cast<std::int64_t*>(delta + bwd_rows); // 8-byte aligned
            key_hi = key_lo + bwd_rows;
        }
    }
};

/// Per-thread facts about its two key rows (g and g + 8 of its warp's 16).
struct key_rows {
    std::int64_t first_pos, last_pos; // positions of the warp's first and last valid key
    std::int64_t pos[2];
    bool valid[2];
    bool live; // the warp has at least one key < k_len
};

__device__ __forceinline__ key_rows make_key_rows(const bwd_params& p, std::int64_t kw0, int lane) {
    key_rows kr;
    kr.live = kw0 < p.k_len;
    const std::int64_t last = min(kw0 + 15, p.k_len - 1);
    kr.first_pos = kr.live ? position_at(p.pos.k_pos, p.pos.k_first, kw0) : 0;
    kr.last_pos = kr.live ? position_at(p.pos.k_pos, p.pos.k_first, last) : 0;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const std::int64_t key = kw0 + lane / 4 + 8 * r;
        kr.valid[r] = key < p.k_len;
        kr.pos[r] = kr.valid[r] ? position_at(p.pos.k_pos, p.pos.k_first, key) : 0;
    }
    return kr;
}

/// Add the block's dK or dV rows (fp32 C fragments of its warps) into global memory.
template <int D>
__device__ __forceinline__ void add_rows(float* out, const float (&acc)[D / 8][4],
                                         const key_rows& kr, std::int64_t kw0, int lane) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (!kr.valid[r])
            continue;
        float* row = out + (kw0 + lane / 4 + 8 * r) * D + 2 * (lane % 4);
#pragma unroll
        for (int d = 0; d < D / 8; ++d) {
            float2 x = *reinterpret_cast<const float2*>(row + d * 8);
            x.x += acc[d][2 * r];
            x.y += acc[d][2 * r + 1];
            *reinterpret_cast<float2*>(row + d * 8) = x;
        }
    }
}

} // namespace ringscale::kernels::cuda::attn
