#include "kernels/cuda/cudnn_fp8_bwd.cuh"
#include "kernels/cudnn_fp8.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <cuda_fp8.h>
#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

constexpr int threads_per_block = 128;

int blocks_for(std::int64_t total) {
    const std::int64_t want = (total + threads_per_block - 1) / threads_per_block;
    return static_cast<int>(want < 65535 ? want : 65535);
}

__global__ void encode_kernel(const float* src, float scale, std::int64_t n, __nv_fp8_e4m3* dst) {
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += stride)
        dst[i] = __nv_fp8_e4m3(src[i] * scale); // saturating (__NV_SATFINITE)
}

__global__ void accumulate_kernel(const __nv_fp8_e4m3* src, const float* descale,
                                  std::int64_t total, std::int64_t rows, std::int64_t r0,
                                  std::int64_t n, std::int64_t dim, float* dst) {
    const float ds = *descale;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         i < total; i += stride) {
        const std::int64_t row = i / dim;
        const std::int64_t g = ((row / n) * rows + r0 + row % n) * dim + i % dim;
        dst[g] += static_cast<float>(src[g]) * ds;
    }
}

__device__ float output_scale(float amax, float max, float headroom) {
    return amax > 0 && isfinite(amax) ? max / (amax * headroom) : 1.0f;
}

__global__ void rescale_kernel(float* s, float max, float headroom) {
    const float* amax = s + fp8_slot::amax;
    const float dq = output_scale(amax[0], max, headroom);
    const float dk = output_scale(amax[1], max, headroom);
    const float dv = output_scale(amax[2], max, headroom);
    const float dp = output_scale(amax[3], max, headroom);
    s[fp8_slot::scale_dq] = dq;
    s[fp8_slot::scale_dk] = dk;
    s[fp8_slot::scale_dv] = dv;
    s[fp8_slot::scale_dp] = dp;
    s[fp8_slot::descale_dq] = 1 / dq;
    s[fp8_slot::descale_dk] = 1 / dk;
    s[fp8_slot::descale_dv] = 1 / dv;
    s[fp8_slot::descale_dp] = 1 / dp;
}

} // namespace

void cudnn_fp8_encode_cuda(const float* src, float scale, std::int64_t n, void* dst, void* stream) {
    if (n <= 0)
        return;
    encode_kernel<<<blocks_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
        src, scale, n, static_cast<__nv_fp8_e4m3*>(dst));
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void cudnn_accumulate_fp8_cuda(const void* src, const float* descale, std::int64_t slabs,
                               std::int64_t rows, std::int64_t r0, std::int64_t n, std::int64_t dim,
                               float* dst, void* stream) {
    RINGSCALE_REQUIRE(slabs >= 0 && n >= 0 && r0 >= 0 && r0 + n <= rows && dim > 0,
                      "cudnn_accumulate_fp8_cuda: rows out of range");
    const std::int64_t total = slabs * n * dim;
    if (total == 0)
        return;
    accumulate_kernel<<<blocks_for(total), threads_per_block, 0,
                        static_cast<cudaStream_t>(stream)>>>(static_cast<const __nv_fp8_e4m3*>(src),
                                                             descale, total, rows, r0, n, dim, dst);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void cudnn_fp8_rescale_cuda(float* scalars, void* stream) {
    rescale_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(scalars, cudnn_fp8_max,
                                                                   cudnn_fp8_headroom);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
