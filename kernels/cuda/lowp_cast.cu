#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/lowp_cast.cuh"
#include "src/base/error.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace ringscale::kernels::cuda {

namespace {

__device__ float widen(__nv_bfloat16 v) {
    return __bfloat162float(v);
}
__device__ float widen(__half v) {
    return __half2float(v);
}
__device__ void narrow(float v, __nv_bfloat16* out) {
    *out = __float2bfloat16_rn(v);
}
__device__ void narrow(float v, __half* out) {
    *out = __float2half_rn(v);
}

template <typename T>
__global__ void cast_kernel(std::size_t n, const float* src, float scale, T* dst,
                            unsigned long long* overflows) {
    unsigned long long inf = 0;
    RINGSCALE_GRID_STRIDE(i, n) {
        narrow(src[i] * scale, dst + i);
        inf += isinf(widen(dst[i])) && isfinite(src[i]) ? 1u : 0u;
    }
    if (overflows && inf > 0)
        atomicAdd(overflows, inf);
}

template <typename T>
__global__ void round_kernel(std::size_t n, const float* src, float scale, float* out) {
    RINGSCALE_GRID_STRIDE(i, n) {
        T v;
        narrow(src[i] * scale, &v);
        out[i] = widen(v) / scale;
    }
}

template <__nv_fp8_interpretation_t F>
__global__ void round_fp8_kernel(std::size_t n, const float* src, float scale, float* out) {
    RINGSCALE_GRID_STRIDE(i, n) {
        const __nv_fp8_storage_t q = __nv_cvt_float_to_fp8(src[i] * scale, __NV_SATFINITE, F);
        out[i] = __half2float(__half(__nv_cvt_fp8_to_halfraw(q, F))) / scale;
    }
}

} // namespace

void cast_lowp_cuda(lt_type t, std::size_t n, const float* src, float scale, void* dst,
                    unsigned long long* overflows, void* stream) {
    if (t == lt_type::bf16)
        launch_elementwise(cast_kernel<__nv_bfloat16>, n, stream, n, src, scale,
                           static_cast<__nv_bfloat16*>(dst), overflows);
    else if (t == lt_type::f16)
        launch_elementwise(cast_kernel<__half>, n, stream, n, src, scale, static_cast<__half*>(dst),
                           overflows);
    else
        throw config_error("cast_lowp_cuda: the type must be bf16 or fp16");
}

void round_lowp_cuda(lt_type t, std::size_t n, const float* src, float scale, float* out,
                     void* stream) {
    switch (t) {
    case lt_type::bf16:
        launch_elementwise(round_kernel<__nv_bfloat16>, n, stream, n, src, scale, out);
        break;
    case lt_type::f16:
        launch_elementwise(round_kernel<__half>, n, stream, n, src, scale, out);
        break;
    case lt_type::e4m3:
        launch_elementwise(round_fp8_kernel<__NV_E4M3>, n, stream, n, src, scale, out);
        break;
    case lt_type::e5m2:
        launch_elementwise(round_fp8_kernel<__NV_E5M2>, n, stream, n, src, scale, out);
        break;
    }
}

} // namespace ringscale::kernels::cuda
