// The launch shape of the elementwise kernels (conversions, fills, layouts, optimizer steps):
// 256 threads a block, at most 65535 blocks, and a grid-stride loop over the elements past them.
#pragma once

#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cstddef>
#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

/// Threads per block of the elementwise kernels and their grid for n elements (grid-stride
/// loops cover the rest past 65535 blocks).
constexpr int elementwise_threads = 256;

inline int elementwise_blocks(std::size_t n) {
    const std::size_t blocks = (n + elementwise_threads - 1) / elementwise_threads;
    return static_cast<int>(blocks < 65535 ? blocks : 65535);
}

/// Loops `k` (std::size_t) over [0, n), this thread's elements of the grid.
#define RINGSCALE_GRID_STRIDE(k, n)                                                                \
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < (n); \
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x)

/// Launches `kernel(args...)` over n elements on `stream` (a cudaStream_t) and checks the
/// launch; nothing when n is 0.
template <typename... Params, typename... Args>
void launch_elementwise(void (*kernel)(Params...), std::size_t n, void* stream, Args... args) {
    if (n == 0)
        return;
    kernel<<<elementwise_blocks(n), elementwise_threads, 0, static_cast<cudaStream_t>(stream)>>>(
        args...);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
