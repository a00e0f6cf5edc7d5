// The softmax's exponential on AVX-512 (kernels/cpu/attention_cpu.cpp): 2^x by the same
// split and polynomial as the portable exp2_poly there (round to nearest, Cephes' degree-6
// polynomial for 2^f, |f| <= 1/2, x clamped below at -126), with 2^n applied by vscalefps,
// so each result equals the portable one; 12 vector instructions per 16 scores against the
// portable clone's 16, on the ports the tile products need.
#pragma once

#include <cstdint>

namespace ringscale::kernels::cpu {

/// x[j] = 2^(x[j] - m) for j < n, in place; returns their sum, in the portable path's order
/// (16 lanes over whole vectors, added by halves, after the last n mod 16 one by one). Only
/// where tile_gemm_avx512() (kernels/cpu/attention_gemm.hpp) is true.
float row_exp2_sum_avx512(float* x, std::int64_t n, float m);

/// The maximum of x[0, n), -inf when n == 0; NaNs are passed over, as the portable row_max
/// does. The whole vectors' lanes, then the last n mod 16 in one masked vector, each reduced by
/// halves: equal to the portable result but for the sign of a zero maximum. Only where
/// tile_gemm_avx512() is true.
float row_max_avx512(const float* x, std::int64_t n);

/// The forward's online-softmax step on a whole tile of scores s [rows, cols] (log2 units, no
/// key masked), in fp32: each row's maximum from `lanes` [rows, 16] (its maxima by lane, from
/// tile_gemm_nt), the running max and sum updated, the row turned into P, O's row [dim] (a
/// multiple of 16) rescaled; as the portable path of fwd_tile_softmax computes them.
void softmax_whole_rows_avx512(float* s, std::int64_t rows, std::int64_t cols, const float* lanes,
                               float* row_max, float* row_sum, float* o, std::int64_t dim);

} // namespace ringscale::kernels::cpu
