// CUDA dense (fully connected) layer: the device twin of kernels/linear.hpp, y = x·Wᵀ + b in
// fp32, every product through cuBLAS. Same row-major layout and the same overwrite/accumulate
// contract as linear_fwd / linear_bwd. Declarations only, free of CUDA types.
#pragma once

#include "kernels/cuda/cublas_context.hpp"
#include "kernels/linear.hpp"

namespace ringscale::kernels::cuda {

/// y[tokens, out] = x[tokens, in]·W[out, in]ᵀ + b[out], as kernels::cpu::linear_fwd; `b` may be
/// null (no bias). OVERWRITES y. All pointers are row-major DEVICE memory owned by the caller and
/// must not overlap. Asynchronous on ctx.stream(). Throws config_error for a bad shape
/// (kernels::linear_check) and a cuda error if cuBLAS or a launch fails.
void linear_fwd_cuda(cublas_context& ctx, const linear_shape& s, const float* x, const float* w,
                     const float* b, float* y);

/// Backward of linear_fwd_cuda given dy[tokens, out], as kernels::cpu::linear_bwd:
/// dx[tokens, in] = dy·W is OVERWRITTEN (dx may be null to skip it);
/// dw[out, in] += dyᵀ·x and db[out] += Σ_tokens dy (summed in double) are ACCUMULATED (db may
/// be null). Row-major DEVICE pointers, caller-owned, not overlapping; asynchronous on
/// ctx.stream().
void linear_bwd_cuda(cublas_context& ctx, const linear_shape& s, const float* x, const float* w,
                     const float* dy, float* dx, float* dw, float* db);

/// y[tokens, out] = b[out] on every row (a GEMM with beta = 1 then adds its product).
/// DEVICE pointers; asynchronous on `stream` (a cudaStream_t).
void bias_broadcast_cuda(std::size_t tokens, std::size_t out, const float* b, float* y,
                         void* stream);

/// db[out] += Σ_tokens dy[tokens, out], summed in double. DEVICE pointers; asynchronous on
/// `stream`.
void bias_grad_cuda(std::size_t tokens, std::size_t out, const float* dy, float* db, void* stream);

} // namespace ringscale::kernels::cuda
