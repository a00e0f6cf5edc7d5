#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/gelu.cuh"

namespace ringscale::kernels::cuda {

namespace {

constexpr float sqrt_2_over_pi = 0.7978845608028654f;
constexpr float cubic = 0.044715f;

__global__ void gelu_fwd_kernel(std::size_t n, const float* x, float* y) {
    RINGSCALE_GRID_STRIDE(k, n) {
        const float v = x[k];
        const float u = sqrt_2_over_pi * (v + cubic * v * v * v);
        y[k] = 0.5f * v * (1.0f + tanhf(u));
    }
}

__global__ void gelu_bwd_kernel(std::size_t n, const float* x, const float* dy, float* dx) {
    RINGSCALE_GRID_STRIDE(k, n) {
        const float v = x[k];
        const float t = tanhf(sqrt_2_over_pi * (v + cubic * v * v * v));
        const float du = sqrt_2_over_pi * (1.0f + 3.0f * cubic * v * v);
        const float grad = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
        dx[k] = dy[k] * grad;
    }
}

} // namespace

void gelu_fwd_cuda(std::size_t n, const float* x, float* y, void* stream) {
    launch_elementwise(gelu_fwd_kernel, n, stream, n, x, y);
}

void gelu_bwd_cuda(std::size_t n, const float* x, const float* dy, float* dx, void* stream) {
    launch_elementwise(gelu_bwd_kernel, n, stream, n, x, dy, dx);
}

} // namespace ringscale::kernels::cuda
