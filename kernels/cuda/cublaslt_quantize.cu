#include "kernels/cuda/cublaslt_quantize.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "src/base/error.hpp"

#include <cuda_fp8.h>

namespace ringscale::kernels::cuda {

namespace {

// The block's largest |x| into *amax: a non-negative float's bits order as an int's.
__device__ void block_amax(float local, float* amax) {
    for (int off = 16; off > 0; off >>= 1)
        local = fmaxf(local, __shfl_xor_sync(0xffffffffu, local, off));
    if ((threadIdx.x & 31) == 0)
        atomicMax(reinterpret_cast<int*>(amax), __float_as_int(local));
}

template <__nv_fp8_interpretation_t F>
__global__ void quantize_kernel(std::int64_t rows, std::int64_t cols, const float* src, float scale,
                                bool transpose, __nv_fp8_storage_t* dst, float* amax) {
    const auto n = static_cast<std::size_t>(rows * cols);
    float local = 0.0f;
    RINGSCALE_GRID_STRIDE(k, n) {
        const float v = src[k];
        if (!isnan(v))
            local = fmaxf(local, fabsf(v));
        const std::size_t r = k / static_cast<std::size_t>(cols),
                          c = k % static_cast<std::size_t>(cols);
        const std::size_t at = transpose ? c * static_cast<std::size_t>(rows) + r : k;
        dst[at] = __nv_cvt_float_to_fp8(v * scale, __NV_SATFINITE, F);
    }
    // Every lane of the warp gets here (the loop has no early exit): the shuffles see all 32.
    block_amax(local, amax);
}

} // namespace

void quantize_fp8_cuda(lt_type t, std::int64_t rows, std::int64_t cols, const float* src,
                       float scale, bool transpose, void* dst, float* amax, void* stream) {
    const auto n = static_cast<std::size_t>(rows * cols);
    auto* out = static_cast<__nv_fp8_storage_t*>(dst);
    if (t == lt_type::e4m3)
        launch_elementwise(quantize_kernel<__NV_E4M3>, n, stream, rows, cols, src, scale, transpose,
                           out, amax);
    else if (t == lt_type::e5m2)
        launch_elementwise(quantize_kernel<__NV_E5M2>, n, stream, rows, cols, src, scale, transpose,
                           out, amax);
    else
        throw config_error("quantize_fp8_cuda: the type must be e4m3 or e5m2");
}

} // namespace ringscale::kernels::cuda
