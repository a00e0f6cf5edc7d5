// Fully connected layer y = x·Wᵀ + b in fp32: a fast version (every product through OpenBLAS
// cblas_sgemm) and a plain reference (loops, double accumulation) that tests use as the oracle.
// All buffers are row-major, owned by the caller, and must not overlap unless stated.
#pragma once

#include <cstddef>

namespace ringscale::kernels {

/// Shape of one linear layer: x is [tokens, in], W is [out, in], b is [out], y is [tokens, out].
struct linear_shape {
    std::size_t tokens = 0;
    std::size_t in = 0;
    std::size_t out = 0;
};

/// Throws config_error unless every dimension is > 0 and fits a BLAS int.
void linear_check(const linear_shape& s);

/// FLOPs of one forward (2·tokens·in·out); the backward's dx + dW products are twice that.
double linear_fwd_flops(const linear_shape& s);

/// y[tokens, out] = x[tokens, in]·W[out, in]ᵀ + b[out]; `b` may be null (no bias).
/// Overwrites y. The rank's threads (blas_threads()) each run a single-threaded cblas_sgemm
/// on a block of token rows (kernels/parallel).
void linear_fwd(const linear_shape& s, const float* x, const float* w, const float* b, float* y);

/// Backward of linear_fwd given dy[tokens, out]:
/// dx[tokens, in] = dy·W is OVERWRITTEN (dx may be null to skip it);
/// dw[out, in] += dyᵀ·x and db[out] += Σ_tokens dy are ACCUMULATED (db may be null),
/// so gradient accumulation over micro-batches and bucketed all-reduce work unchanged.
void linear_bwd(const linear_shape& s, const float* x, const float* w, const float* dy, float* dx,
                float* dw, float* db);

/// Reference forward: same contract as linear_fwd; plain loops, double accumulation.
void linear_fwd_ref(const linear_shape& s, const float* x, const float* w, const float* b,
                    float* y);

/// Reference backward: same contract as linear_bwd (dx overwritten, dw/db accumulated);
/// plain loops, each sum accumulated in double before it is added to the float gradient.
void linear_bwd_ref(const linear_shape& s, const float* x, const float* w, const float* dy,
                    float* dx, float* dw, float* db);

} // namespace ringscale::kernels
