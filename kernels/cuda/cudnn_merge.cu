#include "kernels/cuda/cudnn_merge.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

constexpr int threads_per_block = 128;

__device__ float widen(__nv_bfloat16 x) {
    return __bfloat162float(x);
}

__device__ float widen(__half x) {
    return __half2float(x);
}

// One block per call row (grid-stride over rows), as softmax_merge_kernel.
template <typename T>
__global__ void cudnn_merge_kernel(const T* o_step, const float* stats, std::int64_t rows,
                                   std::int64_t q_rows, std::int64_t q0, std::int64_t q_len,
                                   std::int64_t dim, float* o, float* lse) {
    for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const std::int64_t g = (r / q_len) * q_rows + q0 + r % q_len;
        const float la = lse[g];
        const float lb = stats[g];
        __syncthreads(); // every thread read lse[g] before thread 0 writes it
        const float hi = fmaxf(la, lb);
        const float lo = fminf(la, lb);
        const bool empty = hi == -INFINITY;
        const float m = empty ? hi : hi + log1pf(expf(lo - hi));
        const float wa = empty ? 0.0f : expf(la - m);
        const float wb = empty ? 0.0f : expf(lb - m);
        const std::int64_t base = g * dim;
        for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x)
            o[base + d] = empty ? 0.0f : wa * o[base + d] + wb * widen(o_step[base + d]);
        if (threadIdx.x == 0)
            lse[g] = m;
        __syncthreads();
    }
}

} // namespace

void cudnn_merge_cuda(attn_dtype dtype, const void* o_step, const float* stats,
                      std::int64_t batch_heads, std::int64_t q_rows, std::int64_t q0,
                      std::int64_t q_len, std::int64_t dim, float* o, float* lse, void* stream) {
    RINGSCALE_REQUIRE(batch_heads >= 0 && q_len >= 0 && q0 >= 0 && q0 + q_len <= q_rows,
                      "cudnn_merge_cuda: rows out of range");
    const std::int64_t rows = batch_heads * q_len;
    if (rows == 0)
        return;
    const int blocks = static_cast<int>(rows < 65535 ? rows : 65535);
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype::bf16)
        cudnn_merge_kernel<<<blocks, threads_per_block, 0, s>>>(
            static_cast<const __nv_bfloat16*>(o_step), stats, rows, q_rows, q0, q_len, dim, o, lse);
    else
        cudnn_merge_kernel<<<blocks, threads_per_block, 0, s>>>(
            static_cast<const __half*>(o_step), stats, rows, q_rows, q0, q_len, dim, o, lse);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
