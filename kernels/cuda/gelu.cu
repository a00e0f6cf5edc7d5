#include "kernels/cuda/gelu.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

constexpr float sqrt_2_over_pi = 0.7978845608028654f;
constexpr float cubic = 0.044715f;
constexpr int threads_per_block = 256;

__global__ void gelu_fwd_kernel(std::size_t n, const float* x, float* y) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float v = x[k];
        const float u = sqrt_2_over_pi * (v + cubic * v * v * v);
        y[k] = 0.5f * v * (1.0f + tanhf(u));
    }
}

__global__ void gelu_bwd_kernel(std::size_t n, const float* x, const float* dy, float* dx) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float v = x[k];
        const float t = tanhf(sqrt_2_over_pi * (v + cubic * v * v * v));
        const float du = sqrt_2_over_pi * (1.0f + 3.0f * cubic * v * v);
        const float grad = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
        dx[k] = dy[k] * grad;
    }
}

int grid_for(std::size_t n) {
    const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
    return static_cast<int>(blocks < 65535 ? blocks : 65535);
}

} // namespace

void gelu_fwd_cuda(std::size_t n, const float* x, float* y, void* stream) {
    if (n == 0)
        return;
    gelu_fwd_kernel<<<grid_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(n, x,
                                                                                              y);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void gelu_bwd_cuda(std::size_t n, const float* x, const float* dy, float* dx, void* stream) {
    if (n == 0)
        return;
    gelu_bwd_kernel<<<grid_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
        n, x, dy, dx);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
