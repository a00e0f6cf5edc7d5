// Conversions between fp32 and the attention kernels' element types on the device
// (attention_fwd.cuh: to_attn_dtype_cuda, from_attn_dtype_cuda, round_values_cuda).
#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

using namespace attn;

template <typename T>
__global__ void to_dtype_kernel(std::size_t n, const float* src, T* dst) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        dst[k] = T(src[k]); // round to nearest even
}

template <typename T>
__global__ void from_dtype_kernel(std::size_t n, const T* src, float* dst) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        dst[k] = static_cast<float>(src[k]);
}

template <typename T>
__global__ void round_kernel(std::size_t n, float* x) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        x[k] = static_cast<float>(T(x[k])); // round to nearest even, widen exactly
}

} // namespace

const char* to_string(attn_dtype dtype) {
    return dtype == attn_dtype::bf16 ? "bf16" : "fp16";
}

void to_attn_dtype_cuda(attn_dtype dtype, std::size_t n, const float* src, void* dst,
                        void* stream) {
    if (n == 0)
        return;
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype::bf16)
        to_dtype_kernel<<<elementwise_blocks(n), elementwise_threads, 0, s>>>(
            n, src, static_cast<__nv_bfloat16*>(dst));
    else
        to_dtype_kernel<<<elementwise_blocks(n), elementwise_threads, 0, s>>>(
            n, src, static_cast<__half*>(dst));
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void from_attn_dtype_cuda(attn_dtype dtype, std::size_t n, const void* src, float* dst,
                          void* stream) {
    if (n == 0)
        return;
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype::bf16)
        from_dtype_kernel<<<elementwise_blocks(n), elementwise_threads, 0, s>>>(
            n, static_cast<const __nv_bfloat16*>(src), dst);
    else
        from_dtype_kernel<<<elementwise_blocks(n), elementwise_threads, 0, s>>>(
            n, static_cast<const __half*>(src), dst);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void round_values_cuda(attn_dtype dtype, std::size_t n, float* x, void* stream) {
    if (n == 0)
        return;
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype::bf16)
        round_kernel<__nv_bfloat16><<<elementwise_blocks(n), elementwise_threads, 0, s>>>(n, x);
    else
        round_kernel<__half><<<elementwise_blocks(n), elementwise_threads, 0, s>>>(n, x);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
