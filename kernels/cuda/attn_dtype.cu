// Conversions between fp32 and the attention kernels' element types on the device
// (attention_fwd.cuh: to_attn_dtype_cuda, from_attn_dtype_cuda, round_values_cuda).
#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/cuda/elementwise.cuh"

namespace ringscale::kernels::cuda {

namespace {

using namespace attn;

template <typename T>
__global__ void to_dtype_kernel(std::size_t n, const float* src, T* dst) {
    RINGSCALE_GRID_STRIDE(k, n) {
        dst[k] = T(src[k]); // round to nearest even
    }
}

template <typename T>
__global__ void from_dtype_kernel(std::size_t n, const T* src, float* dst) {
    RINGSCALE_GRID_STRIDE(k, n) {
        dst[k] = static_cast<float>(src[k]);
    }
}

template <typename T>
__global__ void round_kernel(std::size_t n, float* x) {
    RINGSCALE_GRID_STRIDE(k, n) {
        x[k] = static_cast<float>(T(x[k])); // round to nearest even, widen exactly
    }
}

} // namespace

const char* to_string(attn_dtype dtype) {
    return dtype == attn_dtype::bf16 ? "bf16" : "fp16";
}

void to_attn_dtype_cuda(attn_dtype dtype, std::size_t n, const float* src, void* dst,
                        void* stream) {
    if (dtype == attn_dtype::bf16)
        launch_elementwise(to_dtype_kernel<__nv_bfloat16>, n, stream, n, src,
                           static_cast<__nv_bfloat16*>(dst));
    else
        launch_elementwise(to_dtype_kernel<__half>, n, stream, n, src, static_cast<__half*>(dst));
}

void from_attn_dtype_cuda(attn_dtype dtype, std::size_t n, const void* src, float* dst,
                          void* stream) {
    if (dtype == attn_dtype::bf16)
        launch_elementwise(from_dtype_kernel<__nv_bfloat16>, n, stream, n,
                           static_cast<const __nv_bfloat16*>(src), dst);
    else
        launch_elementwise(from_dtype_kernel<__half>, n, stream, n, static_cast<const __half*>(src),
                           dst);
}

void round_values_cuda(attn_dtype dtype, std::size_t n, float* x, void* stream) {
    if (dtype == attn_dtype::bf16)
        launch_elementwise(round_kernel<__nv_bfloat16>, n, stream, n, x);
    else
        launch_elementwise(round_kernel<__half>, n, stream, n, x);
}

} // namespace ringscale::kernels::cuda
