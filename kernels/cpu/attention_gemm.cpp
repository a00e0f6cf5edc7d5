#include "kernels/cpu/attention_gemm.hpp"

#include <algorithm>
#include <cblas.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RINGSCALE_HAVE_AVX512_TILES 1
#define RINGSCALE_AVX512 __attribute__((target("avx512f")))
#endif

namespace ringscale::kernels::cpu {

namespace {

#ifdef RINGSCALE_HAVE_AVX512_TILES

constexpr int k_mr = 6;            // rows of C per micro-kernel
constexpr int k_nv = 4;            // 16-float vectors of C per row: 64 columns
constexpr std::int64_t k_kc = 128; // k per block: a 128 x 64 panel of B (32 KiB) stays in L1

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
    bool accumulate; ///< C += alpha * A·B, else C = alpha * A·B
    __mmask16 tail;  ///< lanes of the last vector that are columns of C
};

/// C[MR, 16 NV] (+)= alpha * A·B over kc, the accumulators in registers.
template <int MR, int NV>
RINGSCALE_AVX512 void micro_kernel(const tile_args& t) {
    __m512 acc[MR][NV];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            acc[i][v] = _mm512_setzero_ps();
    const float* a = t.a;
    const float* b = t.b;
    for (std::int64_t kk = 0; kk < t.kc; ++kk, a += t.a_ks, b += t.ldb) {
        __m512 bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV - 1; ++v)
            bv[v] = _mm512_loadu_ps(b + 16 * v);
        bv[NV - 1] = _mm512_maskz_loadu_ps(t.tail, b + 16 * (NV - 1));
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) {
            const __m512 ai = _mm512_set1_ps(a[i * t.a_rs]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
        }
    }
    const __m512 alpha = _mm512_set1_ps(t.alpha);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
            float* c = t.c + i * t.ldc + 16 * v;
            const __mmask16 lanes = v == NV - 1 ? t.tail : __mmask16(0xFFFF);
            __m512 x = t.alpha == 1.0f ? acc[i][v] : _mm512_mul_ps(alpha, acc[i][v]);
            if (t.accumulate)
                x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(lanes, c));
            _mm512_mask_storeu_ps(c, lanes, x);
        }
}

using micro_fn = void (*)(const tile_args&);

template <int MR>
constexpr micro_fn row_of(int nv) {
    return nv == 1   ? micro_kernel<MR, 1>
           : nv == 2 ? micro_kernel<MR, 2>
           : nv == 3 ? micro_kernel<MR, 3>
                     : micro_kernel<MR, 4>;
}

micro_fn micro_of(int mr, int nv) {
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

/// C[m, n] (+)= alpha * sum_kk a(i, kk) b(kk, j): k in blocks of k_kc, then 64-column panels
/// of B (kept in L1 across the row blocks), then 6-row blocks of C.
void gemm_avx512(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                 std::int64_t a_rs, std::int64_t a_ks, const float* b, std::int64_t ldb,
                 bool accumulate, float* c, std::int64_t ldc) {
    for (std::int64_t k0 = 0; k0 < k; k0 += k_kc) {
        const std::int64_t kc = std::min(k_kc, k - k0);
        for (std::int64_t j0 = 0; j0 < n; j0 += 16 * k_nv) {
            const std::int64_t cols = std::min<std::int64_t>(16 * k_nv, n - j0);
            const int nv = static_cast<int>((cols + 15) / 16);
            const int last = static_cast<int>(cols - 16 * (nv - 1));
            const auto tail = static_cast<__mmask16>(last == 16 ? 0xFFFF : (1u << last) - 1);
            for (std::int64_t i0 = 0; i0 < m; i0 += k_mr) {
                const int mr = static_cast<int>(std::min<std::int64_t>(k_mr, m - i0));
                const tile_args t{kc,  a + i0 * a_rs + k0 * a_ks, a_rs, a_ks,  b + k0 * ldb + j0,
                                  ldb, c + i0 * ldc + j0,         ldc,  alpha, accumulate || k0 > 0,
                                  tail};
                micro_of(mr, nv)(t);
            }
        }
    }
}

#endif

} // namespace

bool tile_gemm_avx512() {
#ifdef RINGSCALE_HAVE_AVX512_TILES
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") != 0;
    }();
    return has;
#else
    return false;
#endif
}

void pack_transposed(const float* src, std::int64_t n, std::int64_t k, float* dst,
                     std::int64_t ld) {
    for (std::int64_t kk = 0; kk < k; ++kk)
        std::fill(dst + kk * ld + n, dst + (kk + 1) * ld, 0.0f);
    // 16 source rows at a time: each destination row gets 16 contiguous floats per pass.
    for (std::int64_t j0 = 0; j0 < n; j0 += 16) {
        const std::int64_t rows = std::min<std::int64_t>(16, n - j0);
        for (std::int64_t kk = 0; kk < k; ++kk)
            for (std::int64_t j = 0; j < rows; ++j)
                dst[kk * ld + j0 + j] = src[(j0 + j) * k + kk];
    }
}

void tile_gemm_nt(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                  const float* b, const float* bt, std::int64_t ldbt, float* c, std::int64_t ldc) {
#ifdef RINGSCALE_HAVE_AVX512_TILES
    if (tile_gemm_avx512())
        return gemm_avx512(m, n, k, alpha, a, k, 1, bt, ldbt, false, c, ldc);
#endif
    (void)bt, (void)ldbt;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(m), int(n), int(k), alpha, a, int(k),
                b, int(k), 0.0f, c, int(ldc));
}

void tile_gemm_nn_acc(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                      std::int64_t ldc) {
#ifdef RINGSCALE_HAVE_AVX512_TILES
    if (tile_gemm_avx512())
        return gemm_avx512(m, n, k, 1.0f, a, lda, 1, b, ldb, true, c, ldc);
#endif
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f, a,
                int(lda), b, int(ldb), 1.0f, c, int(ldc));
}

void tile_gemm_tn_acc(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                      std::int64_t ldc) {
#ifdef RINGSCALE_HAVE_AVX512_TILES
    if (tile_gemm_avx512())
        return gemm_avx512(m, n, k, 1.0f, a, 1, lda, b, ldb, true, c, ldc);
#endif
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f, a, int(lda),
                b, int(ldb), 1.0f, c, int(ldc));
}

} // namespace ringscale::kernels::cpu
