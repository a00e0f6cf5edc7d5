// The shape of one cuBLASLt GEMM of the training step and the rules Hopper's cuBLASLt sets on
// it, as plain host code (no CUDA type): kernels/cuda/cublaslt_gemm runs it, the unit tests
// check the rules without a GPU.
//
// Row-major, as the rest of ringscale: D[m, n] = alpha · op(A) · op(B) + beta · D, D in fp32,
// A stored [m, k] ([k, m] when a_trans), B stored [k, n] ([n, k] when b_trans). Every product
// accumulates in fp32 (CUBLAS_COMPUTE_32F, fp32 scale type). fp8 operands carry per-tensor
// dequantisation factors (1/s) as explicit device operands.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace ringscale::kernels::cuda {

/// Operand types: bf16, fp16, and fp8 E4M3 (activations, weights) or E5M2 (gradients).
enum class lt_type { bf16, f16, e4m3, e5m2 };

/// "bf16", "fp16", "e4m3", "e5m2".
inline const char* lt_type_name(lt_type t) {
    switch (t) {
    case lt_type::bf16:
        return "bf16";
    case lt_type::f16:
        return "fp16";
    case lt_type::e4m3:
        return "e4m3";
    case lt_type::e5m2:
        return "e5m2";
    }
    return "?";
}

inline bool lt_is_fp8(lt_type t) {
    return t == lt_type::e4m3 || t == lt_type::e5m2;
}

/// One GEMM's shape and operand types: the key of the descriptor cache (one matmul descriptor,
/// one set of layouts and one algorithm per distinct shape).
struct lt_shape {
    std::int64_t m = 0, n = 0, k = 0;
    bool a_trans = false, b_trans = false;
    lt_type a = lt_type::bf16, b = lt_type::bf16;
    bool operator<(const lt_shape& o) const {
        return std::tie(m, n, k, a_trans, b_trans, a, b) <
               std::tie(o.m, o.n, o.k, o.a_trans, o.b_trans, o.a, o.b);
    }
};

/// "" when cuBLASLt takes `s`, else why not (one line): sizes >= 1 and below 2^31; bf16 and
/// fp16 with both operands of the same type, in any form; fp8 (Hopper) only in the "TN" form
/// (A [m, k] as stored, B stored [n, k]: y = x·Wᵀ; the backward's GEMMs take transposed fp8
/// copies), never two E5M2 operands, and k and n multiples of 16.
inline std::string lt_refusal(const lt_shape& s) {
    constexpr std::int64_t most = (std::int64_t{1} << 31) - 1;
    if (s.m < 1 || s.n < 1 || s.k < 1 || s.m > most || s.n > most || s.k > most)
        return "cuBLASLt GEMM: m, n and k must be 1 to 2^31-1";
    const bool fp8 = lt_is_fp8(s.a) || lt_is_fp8(s.b);
    if (!fp8)
        return s.a == s.b ? "" : "cuBLASLt GEMM: bf16 and fp16 operands must be of one type";
    if (!lt_is_fp8(s.a) || !lt_is_fp8(s.b))
        return "cuBLASLt GEMM: an fp8 operand needs an fp8 partner";
    if (s.a == lt_type::e5m2 && s.b == lt_type::e5m2)
        return "cuBLASLt GEMM: two E5M2 operands are not supported (E4M3 x E5M2 is)";
    if (s.a_trans || !s.b_trans)
        return "cuBLASLt GEMM: fp8 needs A as stored and B stored [n, k] (the TN form)";
    if (s.k % 16 != 0 || s.n % 16 != 0)
        return "cuBLASLt GEMM: fp8 needs k and n to be multiples of 16";
    return "";
}

} // namespace ringscale::kernels::cuda
