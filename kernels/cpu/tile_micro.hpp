// The AVX-512 micro-kernel of the CPU's tile products (kernels/cpu/attention_gemm.cpp, the
// attention tiles; kernels/cpu/linear_gemm.cpp, the linear layers): C[MR, 16 NV] (+)= alpha A·B
// with MR <= 6 rows and NV <= 4 vectors of 16 columns in up to 24 zmm accumulators, one broadcast
// of A and NV loads of B per step of k. Internal to those two files; compiled for AVX-512F by
// attribute, called only where the CPU has it (tile_gemm_avx512()).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#define RINGSCALE_HAVE_AVX512_TILES 1
#define RINGSCALE_AVX512 __attribute__((target("avx512f")))

namespace ringscale::kernels::cpu::tile {

constexpr int k_mr = 6; // rows of C per micro-kernel
constexpr int k_nv = 4; // 16-float vectors of C per row: 64 columns

/// The operands of one micro-kernel call: a(i, kk) = a[i * a_rs + kk * a_ks] and
/// b(kk, j) = b[kk * ldb + j], C row i at c + i * ldc.
struct tile_args {
    std::int64_t kc;
    const float* a;
    std::int64_t a_rs, a_ks;
    const float* b;
    std::int64_t ldb;
    float* c;
    std::int64_t ldc;
    float alpha;
    bool accumulate;   ///< C += alpha * A·B, else C = alpha * A·B
    __mmask16 tail;    ///< lanes of the last vector that are columns of C
    float* lane_max;   ///< null, or [MR, 16]: running maxima of C's rows by lane
    const float* bias; ///< null, or C's columns' row vector, added (alpha 1, no lane_max only)
};

/// C's rows from the accumulators: alpha times them (Scale), plus C's old values (Accumulate);
/// with Lanes, each row's maximum by lane, reduced in registers, into lane_max's row. The
/// choices are template arguments, so no test runs per vector.
template <int MR, int NV, bool Accumulate, bool Scale, bool Lanes>
RINGSCALE_AVX512 inline void store_rows(const tile_args& t, __m512 (&acc)[MR][NV]) {
    const __m512 alpha = _mm512_set1_ps(t.alpha);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
        __m512 row_max = _mm512_set1_ps(-INFINITY);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
            float* c = t.c + i * t.ldc + 16 * v;
            const __mmask16 lanes = v == NV - 1 ? t.tail : __mmask16(0xFFFF);
            __m512 x = Scale ? _mm512_mul_ps(alpha, acc[i][v]) : acc[i][v];
            if (Accumulate)
                x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(lanes, c));
            _mm512_mask_storeu_ps(c, lanes, x);
            // _mm512_mask_max_ps, not _mm512_max_ps: GCC 12 warns inside the latter.
            if (Lanes)
                row_max = _mm512_mask_max_ps(row_max, lanes, row_max, x);
        }
        if (Lanes) {
            float* m = t.lane_max + 16 * i;
            const __m512 old = _mm512_loadu_ps(m);
            _mm512_storeu_ps(m, _mm512_mask_max_ps(old, 0xFFFF, old, row_max));
        }
    }
}

/// C's rows from the accumulators plus the row vector t.bias (plus C's old values: Accumulate).
template <int MR, int NV, bool Accumulate>
RINGSCALE_AVX512 inline void store_rows_bias(const tile_args& t, __m512 (&acc)[MR][NV]) {
    __m512 bias[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
        bias[v] = _mm512_maskz_loadu_ps(v == NV - 1 ? t.tail : __mmask16(0xFFFF), t.bias + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
            float* c = t.c + i * t.ldc + 16 * v;
            const __mmask16 lanes = v == NV - 1 ? t.tail : __mmask16(0xFFFF);
            __m512 x = _mm512_add_ps(acc[i][v], bias[v]);
            if (Accumulate)
                x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(lanes, c));
            _mm512_mask_storeu_ps(c, lanes, x);
        }
}

template <int MR, int NV, bool Accumulate>
RINGSCALE_AVX512 inline void store_tile(const tile_args& t, __m512 (&acc)[MR][NV]) {
    if (t.bias)
        return store_rows_bias<MR, NV, Accumulate>(t, acc);
    const bool scale = t.alpha != 1.0f;
    if (t.lane_max)
        return scale ? store_rows<MR, NV, Accumulate, true, true>(t, acc)
                     : store_rows<MR, NV, Accumulate, false, true>(t, acc);
    return scale ? store_rows<MR, NV, Accumulate, true, false>(t, acc)
                 : store_rows<MR, NV, Accumulate, false, false>(t, acc);
}

/// C[MR, 16 NV] (+)= alpha * A·B over kc, the accumulators in registers.
template <int MR, int NV>
RINGSCALE_AVX512 void micro_kernel(const tile_args& t) {
    // C's lines on their way to L1 while the products run: the stores (and the loads when
    // accumulating) at the end then hit; C is an L2-resident tile, not L1's.
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            _mm_prefetch(reinterpret_cast<const char*>(t.c + i * t.ldc + 16 * v), _MM_HINT_T0);
    __m512 acc[MR][NV];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            acc[i][v] = _mm512_setzero_ps();
    const float* a = t.a;
    const float* b = t.b;
    const std::int64_t kc = t.kc, a_rs = t.a_rs, a_ks = t.a_ks, ldb = t.ldb;
    // B's vectors whole: its panels are zero past C's columns (copy_panel, pack_transposed), or
    // B's rows are one panel wide in place, their lanes past C's columns never stored.
#pragma GCC unroll 2
    for (std::int64_t kk = 0; kk < kc; ++kk, a += a_ks, b += ldb) {
        __m512 bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            bv[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) {
            const __m512 ai = _mm512_set1_ps(a[i * a_rs]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
        }
    }
    if (t.accumulate)
        store_tile<MR, NV, true>(t, acc);
    else
        store_tile<MR, NV, false>(t, acc);
}

using micro_fn = void (*)(const tile_args&);

template <int MR>
constexpr micro_fn row_of(int nv) {
    return nv == 1   ? micro_kernel<MR, 1>
           : nv == 2 ? micro_kernel<MR, 2>
           : nv == 3 ? micro_kernel<MR, 3>
                     : micro_kernel<MR, 4>;
}

inline micro_fn micro_of(int mr, int nv) {
    switch (mr) {
    case 1:
        return row_of<1>(nv);
    case 2:
        return row_of<2>(nv);
    case 3:
        return row_of<3>(nv);
    case 4:
        return row_of<4>(nv);
    case 5:
        return row_of<5>(nv);
    default:
        return row_of<6>(nv);
    }
}

} // namespace ringscale::kernels::cpu::tile

#endif
