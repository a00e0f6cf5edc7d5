// The fp8 operands of kernels/cuda/cublaslt_gemm: fp32 values quantised with a per-tensor
// scale s to E4M3 or E5M2 (round to nearest, saturating to the format's largest finite value),
// optionally transposed (the TN form fp8 GEMMs need: the backward's GEMMs read transposed
// copies), and the tensor's amax for the scale bookkeeping (kernels/model/fp8_scales).
// Declarations only, free of CUDA types.
#pragma once

#include "kernels/cuda/cublaslt_shape.hpp"

#include <cstdint>

namespace ringscale::kernels::cuda {

/// dst = fp8 `t` (e4m3 | e5m2) of scale · src for src [rows, cols] row-major, written
/// [rows, cols], or [cols, rows] when `transpose`; and *amax = max(*amax, max |src|) (NaN
/// ignored; the caller zeroes it before a tensor's first call). DEVICE pointers; asynchronous on
/// `stream` (a cudaStream_t). config_error for a type other than fp8.
void quantize_fp8_cuda(lt_type t, std::int64_t rows, std::int64_t cols, const float* src,
                       float scale, bool transpose, void* dst, float* amax, void* stream);

} // namespace ringscale::kernels::cuda
