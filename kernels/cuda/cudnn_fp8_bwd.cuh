// cuDNN's fp8 ring backward on the device (kernels/cuda/cudnn_attention.cpp): the final merged
// O stored again in E4M3 at V's scale, a call's E4M3 gradient piece added into fp32 times its
// descale (a device value: the scales move with the amaxes), and a call's next output scales
// from the amaxes it reported (kernels/cudnn_fp8.hpp's rule, on the device, no host sync).
// Declarations only, free of CUDA types.
#pragma once

#include <cstdint>

namespace ringscale::kernels::cuda {

/// The slots of one fp8 backward call's device scalars: cuDNN's 12 (in the order of
/// cudnn_fp8_backward_scalars), then the outputs' descales dQ, dK, dV, then its 4 amax
/// outputs dQ, dK, dV, dP.
namespace fp8_slot {
constexpr int descale_dp = 6, scale_dq = 8, scale_dk = 9, scale_dv = 10, scale_dp = 11;
constexpr int descale_dq = 12, descale_dk = 13, descale_dv = 14, amax = 16, count = 20;
} // namespace fp8_slot

/// n fp32 values of `src` times `scale` rounded to E4M3 (saturating) into `dst` (n bytes).
/// DEVICE pointers; asynchronous on `stream` (a cudaStream_t).
void cudnn_fp8_encode_cuda(const float* src, float scale, std::int64_t n, void* dst, void* stream);

/// cudnn_accumulate_cuda for an E4M3 piece: rows [r0, r0 + n) of each of `slabs` slabs of
/// `src` ([slabs, rows, dim], E4M3) times *descale (a device float) added into fp32 `dst`.
void cudnn_accumulate_fp8_cuda(const void* src, const float* descale, std::int64_t slabs,
                               std::int64_t rows, std::int64_t r0, std::int64_t n, std::int64_t dim,
                               float* dst, void* stream);

/// From the call's amax slots, its next output scales and descales (dQ, dK, dV, dP) in
/// `scalars` (fp8_slot's layout, device): 448 / (amax · headroom), 1 where an amax is 0 or
/// not finite, as cudnn_fp8_output_scale.
void cudnn_fp8_rescale_cuda(float* scalars, void* stream);

} // namespace ringscale::kernels::cuda
