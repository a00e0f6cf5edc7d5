// The cuBLASLt GEMMs of one low-precision linear layer (kernels/lowp_gemm, run by
// kernels/cuda/backend_lowp), as plain host code (no CUDA type) the unit tests check: for
// y = x·Wᵀ + b and its backward, each GEMM's lt_shape and which operand it reads in which type,
// as stored or as a transposed copy. bf16 and fp16 read every operand as stored (cuBLASLt
// transposes); fp8 takes Hopper's TN form only (cublaslt_shape), so the backward reads
// transposed fp8 copies: Wᵀ for dx, dyᵀ and xᵀ for dW (kernels/lowp_gemm.hpp's
// lowp_shape_refusal checks them for the jobs).
#pragma once

#include "kernels/cuda/cublaslt_shape.hpp"
#include "kernels/linear.hpp"
#include "kernels/lowp_gemm.hpp"

namespace ringscale::kernels::cuda {

/// The three GEMMs of a linear layer: y = x·Wᵀ, dx = dy·W, dW += dyᵀ·x.
enum class lowp_pass { fwd, dx, dw };

/// One operand of a GEMM: which tensor (stored fp32 [rows, cols] row-major), its type, and
/// whether the GEMM reads its transposed copy [cols, rows].
struct lowp_use {
    lowp_operand op = lowp_operand::x;
    lt_type type = lt_type::bf16;
    bool transposed = false;
    std::int64_t rows = 0, cols = 0;
};

struct lowp_plan {
    lt_shape shape;
    lowp_use a, b;
    float beta = 0; ///< 0: D overwritten (y, dx); 1: accumulated (dW)
};

/// The operand type of `op` for GEMMs of `t`: fp8 reads dy in E5M2, x and w in E4M3.
inline lt_type lowp_type_of(lowp_type t, lowp_operand op) {
    switch (t) {
    case lowp_type::bf16:
        return lt_type::bf16;
    case lowp_type::f16:
        return lt_type::f16;
    case lowp_type::fp8:
        break;
    }
    return op == lowp_operand::dy ? lt_type::e5m2 : lt_type::e4m3;
}

/// The GEMM `p` of the linear layer `s` in type `t`.
inline lowp_plan plan_lowp_gemm(lowp_type t, const linear_shape& s, lowp_pass p) {
    const bool fp8 = t == lowp_type::fp8;
    const auto tokens = static_cast<std::int64_t>(s.tokens);
    const auto in = static_cast<std::int64_t>(s.in), out = static_cast<std::int64_t>(s.out);
    const lowp_use x{lowp_operand::x, lowp_type_of(t, lowp_operand::x), false, tokens, in};
    const lowp_use w{lowp_operand::w, lowp_type_of(t, lowp_operand::w), false, out, in};
    const lowp_use dy{lowp_operand::dy, lowp_type_of(t, lowp_operand::dy), false, tokens, out};
    lowp_plan g;
    switch (p) {
    case lowp_pass::fwd: // y[t, out] = x[t, in] · (W[out, in])ᵀ: TN as stored
        g.a = x;
        g.b = w;
        g.shape = {tokens, out, in, false, true, x.type, w.type};
        break;
    case lowp_pass::dx: // dx[t, in] = dy[t, out] · W[out, in]; fp8: B = Wᵀ copy [in, out]
        g.a = dy;
        g.b = w;
        g.b.transposed = fp8;
        g.shape = {tokens, in, out, false, fp8, dy.type, w.type};
        break;
    case lowp_pass::dw: // dW[out, in] += dy[t, out]ᵀ · x[t, in]; fp8: dyᵀ [out, t], xᵀ [in, t]
        g.a = dy;
        g.a.transposed = fp8;
        g.b = x;
        g.b.transposed = fp8;
        g.shape = {out, in, tokens, !fp8, fp8, dy.type, x.type};
        g.beta = 1;
        break;
    }
    return g;
}

} // namespace ringscale::kernels::cuda
