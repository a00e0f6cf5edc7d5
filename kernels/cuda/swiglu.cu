#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/swiglu.cuh"

namespace ringscale::kernels::cuda {

namespace {

// Element k of g is row k / f, column k % f; its gate and up sit at 2f·row + col and + f.
__global__ void swiglu_fwd_kernel(std::size_t n, std::size_t f, const float* h1, float* g) {
    RINGSCALE_GRID_STRIDE(k, n) {
        const std::size_t at = (k / f) * 2 * f + k % f;
        const float x = h1[at];
        g[k] = x / (1.0f + expf(-x)) * h1[at + f];
    }
}

__global__ void swiglu_bwd_kernel(std::size_t n, std::size_t f, const float* h1, const float* dg,
                                  float* dh1) {
    RINGSCALE_GRID_STRIDE(k, n) {
        const std::size_t at = (k / f) * 2 * f + k % f;
        const float x = h1[at], up = h1[at + f], s = 1.0f / (1.0f + expf(-x));
        dh1[at] = dg[k] * up * s * (1.0f + x * (1.0f - s));
        dh1[at + f] = dg[k] * x * s;
    }
}

} // namespace

void swiglu_fwd_cuda(std::size_t rows, std::size_t f, const float* h1, float* g, void* stream) {
    launch_elementwise(swiglu_fwd_kernel, rows * f, stream, rows * f, f, h1, g);
}

void swiglu_bwd_cuda(std::size_t rows, std::size_t f, const float* h1, const float* dg, float* dh1,
                     void* stream) {
    launch_elementwise(swiglu_bwd_kernel, rows * f, stream, rows * f, f, h1, dg, dh1);
}

} // namespace ringscale::kernels::cuda
