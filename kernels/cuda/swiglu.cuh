// CUDA SwiGLU: the device twin of kernels/cpu/swiglu.hpp (fp32, elementwise over rows).
// Declarations only, free of CUDA types.
#pragma once

#include <cstddef>

namespace ringscale::kernels::cuda {

/// g [rows, f] = silu(h1[:, :f]) · h1[:, f:] for h1 [rows, 2f], as kernels::cpu::swiglu_fwd.
/// OVERWRITES g (not aliasing h1). DEVICE pointers, caller-owned; asynchronous on `stream`
/// (a cudaStream_t; nullptr: default).
void swiglu_fwd_cuda(std::size_t rows, std::size_t f, const float* h1, float* g,
                     void* stream = nullptr);

/// dh1 [rows, 2f] OVERWRITTEN from h1 [rows, 2f] and dg [rows, f], as
/// kernels::cpu::swiglu_bwd (dh1 aliases neither). DEVICE pointers; asynchronous on `stream`.
void swiglu_bwd_cuda(std::size_t rows, std::size_t f, const float* h1, const float* dg, float* dh1,
                     void* stream = nullptr);

} // namespace ringscale::kernels::cuda
