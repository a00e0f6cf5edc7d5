// Fully connected layer y = x·Wᵀ + b in fp32 on the CPU, every product through linear_gemm
// (kernels/cpu/linear_gemm.hpp: the own AVX-512 tiles on AMD CPUs, OpenBLAS's cblas_sgemm
// elsewhere; shape and checks: kernels/linear.hpp; the oracle: kernels/reference/linear_ref).
// All buffers are row-major, owned by the caller, and must not overlap unless stated.
#pragma once

#include "kernels/linear.hpp"

namespace ringscale::kernels::cpu {

/// y[tokens, out] = x[tokens, in]·W[out, in]ᵀ + b[out]; `b` may be null (no bias).
/// Overwrites y. The rank's threads (blas_threads()) each run a single-threaded linear_gemm
/// on a block of token rows (kernels/parallel).
void linear_fwd(const linear_shape& s, const float* x, const float* w, const float* b, float* y);

/// Backward of linear_fwd given dy[tokens, out]:
/// dx[tokens, in] = dy·W is OVERWRITTEN (dx may be null to skip it);
/// dw[out, in] += dyᵀ·x and db[out] += Σ_tokens dy are ACCUMULATED (db may be null),
/// so gradient accumulation over micro-batches and bucketed all-reduce work unchanged.
void linear_bwd(const linear_shape& s, const float* x, const float* w, const float* dy, float* dx,
                float* dw, float* db);

/// linear_fwd with y written as attention heads: y's columns in groups of heads·d, group g
/// BHSD [tokens / seq, heads, seq, d] at dst[g] (out / (heads·d) groups; tokens run in
/// sequences of seq). The own GEMM's stores write the heads where gemm_heads_fused(d);
/// elsewhere y goes to `scratch` [tokens, out] and copy_bhsd moves it (scratch is unused, and
/// may be null, where the stores write them).
void linear_fwd_heads(const linear_shape& s, const float* x, const float* w, const float* b,
                      std::size_t seq, std::size_t heads, std::size_t d, float* const* dst,
                      float* scratch);

/// linear_bwd with dx written as attention heads: BHSD [tokens / seq, heads, seq, d]
/// (in = heads·d). The own GEMM's stores write them where gemm_heads_fused(d); elsewhere dx
/// goes to `scratch` [tokens, in] and copy_bhsd moves it. dx must not be null.
void linear_bwd_heads(const linear_shape& s, const float* x, const float* w, const float* dy,
                      std::size_t seq, std::size_t heads, std::size_t d, float* dx, float* dw,
                      float* db, float* scratch);

} // namespace ringscale::kernels::cpu
