#include "kernels/cuda/cudnn_merge.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
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

__device__ float widen(__nv_fp8_e4m3 x) {
    return static_cast<float>(x);
}

// One block per call row (grid-stride over rows), as softmax_merge_kernel; o_step's values
// times `descale` (1 but for fp8).
template <typename T>
__global__ void cudnn_merge_kernel(const T* o_step, float descale, const float* stats,
                                   std::int64_t rows, std::int64_t q_rows, std::int64_t q0,
                                   std::int64_t q_len, std::int64_t dim, float* o, float* lse) {
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
            o[base + d] =
                empty ? 0.0f : wa * o[base + d] + wb * (widen(o_step[base + d]) * descale);
        if (threadIdx.x == 0)
            lse[g] = m;
        __syncthreads();
    }
}

// Rows [r0, r0 + n) of each slab of a typed [slabs, rows, dim] tensor added into fp32.
template <typename T>
__global__ void cudnn_accumulate_kernel(const T* src, std::int64_t total, std::int64_t rows,
                                        std::int64_t r0, std::int64_t n, std::int64_t dim,
                                        float* dst) {
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         i < total; i += stride) {
        const std::int64_t row = i / dim;
        const std::int64_t g = ((row / n) * rows + r0 + row % n) * dim + i % dim;
        dst[g] += widen(src[g]);
    }
}

} // namespace

void cudnn_accumulate_cuda(attn_dtype dtype, const void* src, std::int64_t slabs, std::int64_t rows,
                           std::int64_t r0, std::int64_t n, std::int64_t dim, float* dst,
                           void* stream) {
    RINGSCALE_REQUIRE(slabs >= 0 && n >= 0 && r0 >= 0 && r0 + n <= rows && dim > 0,
                      "cudnn_accumulate_cuda: rows out of range");
    const std::int64_t total = slabs * n * dim;
    if (total == 0)
        return;
    const std::int64_t want = (total + threads_per_block - 1) / threads_per_block;
    const int blocks = static_cast<int>(want < 65535 ? want : 65535);
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype::bf16)
        cudnn_accumulate_kernel<<<blocks, threads_per_block, 0, s>>>(
            static_cast<const __nv_bfloat16*>(src), total, rows, r0, n, dim, dst);
    else
        cudnn_accumulate_kernel<<<blocks, threads_per_block, 0, s>>>(
            static_cast<const __half*>(src), total, rows, r0, n, dim, dst);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

namespace {

// The merge launch for o_step of `dtype` (fp8: E4M3 read with `descale`).
void merge(attn_dtype_kind dtype, const void* o_step, float descale, const float* stats,
           std::int64_t batch_heads, std::int64_t q_rows, std::int64_t q0, std::int64_t q_len,
           std::int64_t dim, float* o, float* lse, void* stream) {
    RINGSCALE_REQUIRE(batch_heads >= 0 && q_len >= 0 && q0 >= 0 && q0 + q_len <= q_rows,
                      "cudnn_merge_cuda: rows out of range");
    const std::int64_t rows = batch_heads * q_len;
    if (rows == 0)
        return;
    const int blocks = static_cast<int>(rows < 65535 ? rows : 65535);
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype_kind::bf16)
        cudnn_merge_kernel<<<blocks, threads_per_block, 0, s>>>(
            static_cast<const __nv_bfloat16*>(o_step), descale, stats, rows, q_rows, q0, q_len, dim,
            o, lse);
    else if (dtype == attn_dtype_kind::fp16)
        cudnn_merge_kernel<<<blocks, threads_per_block, 0, s>>>(static_cast<const __half*>(o_step),
                                                                descale, stats, rows, q_rows, q0,
                                                                q_len, dim, o, lse);
    else
        cudnn_merge_kernel<<<blocks, threads_per_block, 0, s>>>(
            static_cast<const __nv_fp8_e4m3*>(o_step), descale, stats, rows, q_rows, q0, q_len, dim,
            o, lse);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace

void cudnn_merge_cuda(attn_dtype dtype, const void* o_step, const float* stats,
                      std::int64_t batch_heads, std::int64_t q_rows, std::int64_t q0,
                      std::int64_t q_len, std::int64_t dim, float* o, float* lse, void* stream) {
    merge(dtype == attn_dtype::bf16 ? attn_dtype_kind::bf16 : attn_dtype_kind::fp16, o_step, 1.0f,
          stats, batch_heads, q_rows, q0, q_len, dim, o, lse, stream);
}

void cudnn_merge_fp8_cuda(const void* o_step, float descale, const float* stats,
                          std::int64_t batch_heads, std::int64_t q_rows, std::int64_t q0,
                          std::int64_t q_len, std::int64_t dim, float* o, float* lse,
                          void* stream) {
    merge(attn_dtype_kind::fp8, o_step, descale, stats, batch_heads, q_rows, q0, q_len, dim, o, lse,
          stream);
}

} // namespace ringscale::kernels::cuda
