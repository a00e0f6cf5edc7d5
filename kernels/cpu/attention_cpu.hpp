// Fast CPU attention (fp32): tiled flash attention on register-blocked AVX-512 tile products
// (kernels/cpu/attention_gemm.hpp; OpenBLAS sgemm on CPUs without AVX-512) with a vectorised
// exp2. The forward accumulates into a running (O, LSE) so a ring calls it once per
// arriving K/V block; the backward handles one K/V block given the final LSE.
//
// Emulated bf16/fp16 (`round` = elem::bf16 or elem::f16; DESIGN.md, "Emulated dtypes"): the
// inputs must already hold values of that type (widened to fp32), and the kernels round where
// the CUDA kernels (kernels/cuda/attention_fwd.cu, attention_bwd.cu) round: P to the type
// before P·V (the row sums stay unrounded fp32), in the backward P before dV += Pᵀ·dO and dS
// (from the unrounded P) before dQ += dS·K and dK += dSᵀ·Q. Products of two rounded values are
// exact in fp32, as on Tensor Cores; accumulation is fp32 in sgemm's order, not the MMA's.
//
// Shapes and masking follow kernels/attention_shape.hpp (BHSD, GQA, causal by global
// positions). head_dim must be 64 or 128. Threads: min(workspace workers, BLAS threads set
// by the launcher, kernels/threads.hpp). Small tile GEMMs scale badly inside OpenBLAS, so
// the kernel runs that many std::threads over independent (batch, head, query tile) items
// (backward: (batch, kv head) groups, which own their dK/dV) and switches OpenBLAS to one
// thread for the duration of the call, restoring the launcher's count afterwards.
#pragma once

#include "kernels/attention_shape.hpp"
#include "kernels/elem.hpp"
#include "src/base/memory.hpp"

#include <cstdint>

namespace ringscale::kernels::cpu {

/// Tile sizes in rows: queries per tile and keys per tile.
struct attention_tiles {
    std::int64_t q_tile = 256;
    std::int64_t k_tile = 256;
};

/// Caller-owned scratch, allocated by attention_workspace_reserve and reused every call;
/// its bytes count towards peak_host_bytes. One slice per worker thread.
struct attention_workspace {
    attention_tiles m_tiles;
    int m_workers = 0;
    host_buffer<float> m_scores; ///< [workers, q_tile, k_tile] scores, then P (or dS)
    host_buffer<float> m_dp;     ///< [workers, q_tile, k_tile] dP (backward only)
    host_buffer<float> m_rows;   ///< [workers, 2, q_tile] running max (log2) and sum
    host_buffer<float> m_pack;   ///< [workers, 2, k_tile to 64, 128] Kᵀ, Vᵀ tiles (backward)
    host_buffer<float> m_kt;     ///< a forward call's Kᵀ and V packed (AVX-512), grown as needed
    /// Emulated bf16/fp16 (kernels/cpu/backend_attention.cpp): a call's Q, K, V and dO widened
    /// to fp32, grown as needed.
    host_buffer<float> m_wide[4];
};

/// Size `ws` for `tiles` and `workers` threads (0: the current BLAS thread count, the
/// launcher's per-rank budget); allocates only when it grows. Throws config_error for
/// tiles < 16 rows.
void attention_workspace_reserve(attention_workspace& ws, attention_tiles tiles = {},
                                 int workers = 0);

/// Throws config_error unless the shape is valid and head_dim is 64 or 128.
void check_attention_cpu_shape(const attention_shape& shape);

/// Start a forward accumulator: O [B,H,Sq,D] = 0, LSE [B,H,Sq] = -inf. Caller owns both.
void attention_fwd_init(const attention_shape& shape, float* o, float* lse);

/// Forward over one K/V block (k_len rows at positions k_pos), merged into the running
/// (O, LSE) in place; O stays normalised, LSE is natural log. Rows with no visible key in
/// any block so far keep O = 0, LSE = -inf. Caller owns all buffers; `ws` must be reserved.
/// `round`: the dtype emulated (see above; f32: none).
void attention_fwd_cpu(const attention_shape& shape, const float* q, const float* k, const float* v,
                       const std::int64_t* q_pos, const std::int64_t* k_pos, float* o, float* lse,
                       attention_workspace& ws, elem round = elem::f32);

/// delta [B,H,Sq] = rowsum(dO * O) over head_dim, for attention_bwd_cpu. Caller owns all.
/// f32: accumulated in double, 8 lanes. bf16/f16 (emulated): in fp32 in the CUDA kernel's order
/// (lane l of a warp sums d = l, l + 32, ... by fused multiply-add, then a butterfly over the 32
/// lanes).
void attention_bwd_delta(const attention_shape& shape, const float* o, const float* d_o,
                         float* delta, elem round = elem::f32);

/// Backward over one K/V block, given the final LSE and delta of the forward over all
/// blocks: adds this block's share to dQ [B,H,Sq,D] and its gradients to dK, dV
/// [B,Hkv,Sk,D] (all accumulated, so zero them first). Caller owns all buffers.
void attention_bwd_cpu(const attention_shape& shape, const float* q, const float* k, const float* v,
                       const float* d_o, const float* lse, const float* delta,
                       const std::int64_t* q_pos, const std::int64_t* k_pos, float* dq, float* dk,
                       float* dv, attention_workspace& ws, elem round = elem::f32);

} // namespace ringscale::kernels::cpu
