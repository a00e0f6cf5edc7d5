#include "kernels/cuda/softmax_merge.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

constexpr int threads_per_block = 128;

// One block per row (grid-stride over rows when rows exceed the grid).
__global__ void softmax_merge_kernel(const float* o_a, const float* lse_a, const float* o_b,
                                     const float* lse_b, std::int64_t rows, std::int64_t dim,
                                     float* o_out, float* lse_out) {
    for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float la = lse_a[r];
        const float lb = lse_b[r];
        // Every thread has read the row's LSEs before lse_out (which may alias them) is written.
        __syncthreads();
        const float hi = fmaxf(la, lb);
        const float lo = fminf(la, lb);
        const bool empty = hi == -INFINITY;
        const float lse = empty ? hi : hi + log1pf(expf(lo - hi));
        // exp(-inf - finite) = 0: a fully masked side drops out with no special case.
        const float wa = empty ? 0.0f : expf(la - lse);
        const float wb = empty ? 0.0f : expf(lb - lse);
        const std::int64_t base = r * dim;
        for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x)
            o_out[base + d] = empty ? 0.0f : wa * o_a[base + d] + wb * o_b[base + d];
        if (threadIdx.x == 0)
            lse_out[r] = lse;
        __syncthreads();
    }
}

} // namespace

void softmax_merge_cuda(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b,
                        std::int64_t rows, std::int64_t dim, float* o_out, float* lse_out,
                        void* stream) {
    RINGSCALE_REQUIRE(rows >= 0 && dim >= 0, "softmax_merge_cuda: rows and dim must be >= 0");
    if (rows == 0)
        return;
    const int blocks = static_cast<int>(rows < 65535 ? rows : 65535);
    softmax_merge_kernel<<<blocks, threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
        o_a, lse_a, o_b, lse_b, rows, dim, o_out, lse_out);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
