// The row operations of the CPU attention kernels (kernels/cpu/attention_cpu.cpp): maxima,
// the softmax's exponentials and sums, dS, rounding to the dtype, scaling and zeroing, over
// one row of a score tile (row_max serves the cross-entropy's logits too). Each loop is compiled
// for AVX-512, AVX2+FMA and baseline x86-64 (vec_math.hpp); the exponential's sum runs the AVX-512
// vscalefps form where the CPU has it (attention_exp.hpp).
#pragma once

#include "kernels/elem.hpp"

#include <cstdint>

namespace ringscale::kernels::cpu {

/// Maximum of x[0, n); -inf when n == 0; NaNs passed over (on AVX-512 by row_max_avx512).
float row_max(const float* x, std::int64_t n);

/// The portable row_max, whatever the CPU.
float row_max_portable(const float* x, std::int64_t n);

/// x[j] = 2^(x[j] - m) for j < n, in place; returns the sum (on AVX-512 by vscalefps). The
/// sum adds 16 lanes, reduced by halves, then the last n mod 16 entries in order.
float row_exp2_sum(float* x, std::int64_t n, float m);

/// The portable row_exp2_sum, whatever the CPU.
float row_exp2_sum_portable(float* x, std::int64_t n, float m);

/// dS = P * (dP - delta) * scale, in place over dp, n entries (P unrounded, as on CUDA).
void row_ds(const float* p, float* dp, std::int64_t n, float delta, float scale);

/// x[0, n) rounded to bf16 (elem::bf16) or fp16 (elem::f16) in place; f32 leaves x as is.
void row_round(float* x, std::int64_t n, elem e);

/// x[0, n) *= a.
void row_scale(float* x, std::int64_t n, float a);

/// x[0, n) = 0.
void row_zero(float* x, std::int64_t n);

/// x[j] = 0 where x[j] <= FLT_MIN: exp2_poly of a -inf score (a key the mask drops inside a
/// row's key range) is clamped to exactly FLT_MIN; anything that small contributes nothing.
void row_zero_clamped(float* x, std::int64_t n);

} // namespace ringscale::kernels::cpu
