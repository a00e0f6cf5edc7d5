// CUDA GELU, tanh form: the device twin of kernels/cpu/gelu.hpp (fp32, elementwise).
// Declarations only, free of CUDA types.
#pragma once

#include <cstddef>

namespace ringscale::kernels::cuda {

/// y[k] = 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))) for k < n, as kernels::cpu::gelu_fwd.
/// OVERWRITES y; y may alias x; n may be 0. DEVICE pointers, caller-owned; asynchronous on
/// `stream` (a cudaStream_t; nullptr: default).
void gelu_fwd_cuda(std::size_t n, const float* x, float* y, void* stream = nullptr);

/// dx[k] = dy[k] · gelu'(x[k]) for k < n, as kernels::cpu::gelu_bwd (x is the forward's input).
/// OVERWRITES dx; dx may alias dy. DEVICE pointers, caller-owned; asynchronous on `stream`.
void gelu_bwd_cuda(std::size_t n, const float* x, const float* dy, float* dx,
                   void* stream = nullptr);

} // namespace ringscale::kernels::cuda
