// CUDA RMSNorm: the device twin of kernels/cpu/rmsnorm.hpp, fp32 with fp32 accumulation (the CPU
// reference sums in double). Declarations only, free of CUDA types.
#pragma once

#include <cstddef>

namespace ringscale::kernels::cuda {

/// y[rows, dim] = x · inv_rms[row] · gamma[dim], inv_rms[row] = 1 / sqrt(mean_j x² + eps), as
/// kernels::cpu::rmsnorm_fwd. OVERWRITES y and inv_rms[rows]; y may alias x. All pointers are
/// DEVICE memory owned by the caller. Asynchronous on `stream` (a cudaStream_t; nullptr:
/// default). Throws config_error for rows == 0, dim == 0 or a bad eps.
void rmsnorm_fwd_cuda(std::size_t rows, std::size_t dim, float eps, const float* x,
                      const float* gamma, float* y, float* inv_rms, void* stream = nullptr);

/// Backward of rmsnorm_fwd_cuda, as kernels::cpu::rmsnorm_bwd: dx[rows, dim] is OVERWRITTEN (may
/// alias dy); dgamma[dim] += Σ_rows dy · x · inv_rms is ACCUMULATED. DEVICE pointers,
/// caller-owned; asynchronous on `stream`.
void rmsnorm_bwd_cuda(std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                      const float* inv_rms, const float* dy, float* dx, float* dgamma,
                      void* stream = nullptr);

} // namespace ringscale::kernels::cuda
