// What a linear layer's GEMMs multiply in when the training step runs a low precision on a
// device (train_step --dtype bf16|fp16|fp8 on CUDA): the operand type and how each operand is
// scaled, as kernels/model/mixed_precision defines them for the CPU emulation. The backend
// rounds the fp32 operands on the device and multiplies them with fp32 accumulation; the
// bookkeeping (fp8 scales from the amaxes, fp16 overflow counts) stays on the host and is
// reached through the callbacks, so that both devices keep one record.
#pragma once

#include "kernels/linear.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace ringscale::kernels {

/// The GEMMs' operand type: bf16, fp16, or fp8 (E4M3 x and w, E5M2 dy).
enum class lowp_type { bf16, f16, fp8 };

/// A GEMM operand: the input activation x, the weight w, the output gradient dy.
enum class lowp_operand { x, w, dy };

struct lowp_gemm {
    lowp_type type = lowp_type::bf16;
    /// fp16: dy is multiplied by this (the static loss scale) before its cast, and the
    /// products are divided by it again (exact for a power of two). 1 otherwise.
    float dy_scale = 1;
    /// fp8: the scale s an operand whose amax (max |value|) is `amax` is quantised with
    /// (round(s·v), read as that / s). Records the amax. Required for fp8.
    std::function<float(lowp_operand op, float amax)> fp8_scale;
    /// fp16: told how many values of an operand became inf in the cast (0 is not reported).
    std::function<void(std::uint64_t n)> overflowed;
};

/// "" when a GPU of compute capability major.minor runs GEMMs of `t` in this build, else one
/// line: bf16 and fp16 from sm80 (the build's oldest architecture); fp8 on Hopper (sm90: the
/// build's sm90a, and cuBLASLt's fp8 GEMMs there).
std::string lowp_device_refusal(lowp_type t, int cc_major, int cc_minor);

/// "" when cuBLASLt takes every GEMM (y, dx, dW) of the linear layer `s` in `t`, else the
/// first one's refusal (one line): fp8 needs tokens, in and out multiples of 16.
std::string lowp_shape_refusal(lowp_type t, const linear_shape& s);

} // namespace ringscale::kernels
