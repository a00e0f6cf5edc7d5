// The bf16 and fp16 operands of kernels/cuda/cublaslt_gemm (the fp8 ones are
// cublaslt_quantize's), and the fp32 value a GEMM reads from any of the four types (the bias
// gradient sums those, as the CPU emulation does). Round to nearest-even; fp8 saturates as
// quantize_fp8_cuda does. Declarations only, free of CUDA types.
#pragma once

#include "kernels/cuda/cublaslt_shape.hpp"

#include <cstddef>

namespace ringscale::kernels::cuda {

/// dst[n] = `t` (bf16 | fp16) of scale · src; *overflows += the count of finite values that
/// became inf (null: not counted). DEVICE pointers; asynchronous on `stream` (a
/// cudaStream_t). config_error for an fp8 type.
void cast_lowp_cuda(lt_type t, std::size_t n, const float* src, float scale, void* dst,
                    unsigned long long* overflows, void* stream);

/// out[n] = float(`t` of scale · src) / scale: the value a GEMM of `t` reads. out may alias
/// src. DEVICE pointers; asynchronous on `stream`.
void round_lowp_cuda(lt_type t, std::size_t n, const float* src, float scale, float* out,
                     void* stream);

} // namespace ringscale::kernels::cuda
