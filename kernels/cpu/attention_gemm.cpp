#include "kernels/cpu/attention_gemm.hpp"

#include <algorithm>
#include <cblas.h>
#include <cmath>

#include "kernels/cpu/tile_micro.hpp"

namespace ringscale::kernels::cpu {

namespace {

#ifdef RINGSCALE_HAVE_AVX512_TILES

using tile::k_mr;
using tile::k_nv;
using tile::micro_of;
using tile::tile_args;

constexpr std::int64_t k_kc = 128; // k per block: a 128 x 64 panel of B (32 KiB) stays in L1

/// dst[kk * 64 + j] = b[kk * ldb + j] for kk < kc over nv vectors, the last one's lanes
/// outside `tail` zero.
RINGSCALE_AVX512 void copy_panel(const float* b, std::int64_t ldb, std::int64_t kc, int nv,
                                 __mmask16 tail, float* dst) {
    for (std::int64_t kk = 0; kk < kc; ++kk, b += ldb, dst += 16 * k_nv)
        for (int v = 0; v < nv; ++v)
            _mm512_store_ps(dst + 16 * v,
                            _mm512_maskz_loadu_ps(v == nv - 1 ? tail : 0xFFFF, b + 16 * v));
}

/// C[m, n] (+)= alpha * sum_kk a(i, kk) b(kk, j): k in blocks of k_kc, then 64-column panels
/// of B (kept in L1 across the row blocks), then 6-row blocks of C.
void gemm_avx512(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                 std::int64_t a_rs, std::int64_t a_ks, const float* b, std::int64_t ldb,
                 bool accumulate, float* c, std::int64_t ldc, float* lane_max = nullptr,
                 std::int64_t panel_stride = 0, const float* pf = nullptr,
                 std::int64_t pf_floats = 0) {
    alignas(64) float panel[k_kc * 16 * k_nv];
    // `pf`: memory the caller reads next, into L2 a slice per micro-kernel call.
    const std::int64_t calls =
        (k + k_kc - 1) / k_kc * ((n + 16 * k_nv - 1) / (16 * k_nv)) * ((m + k_mr - 1) / k_mr);
    const std::int64_t pf_lines = pf && calls > 0 ? (pf_floats + 15) / 16 : 0;
    const std::int64_t pf_slice = pf_lines > 0 ? (pf_lines + calls - 1) / calls : 0;
    std::int64_t pf_next = 0;
    for (std::int64_t k0 = 0; k0 < k; k0 += k_kc) {
        const std::int64_t kc = std::min(k_kc, k - k0);
        for (std::int64_t j0 = 0; j0 < n; j0 += 16 * k_nv) {
            const std::int64_t cols = std::min<std::int64_t>(16 * k_nv, n - j0);
            const int nv = static_cast<int>((cols + 15) / 16);
            const int last = static_cast<int>(cols - 16 * (nv - 1));
            const auto tail = static_cast<__mmask16>(last == 16 ? 0xFFFF : (1u << last) - 1);
            // The panel copied contiguous: read in place at a stride of ldb its rows map onto a
            // few L1 sets and do not stay there across the row blocks.
            // ldb 0: B packed already, panels panel_stride apart. B's rows one panel wide (K,
            // V, Q or dO rows at D=64) are a panel as they stand: the lanes past C's columns,
            // if any, are never stored.
            const float* bp = panel;
            if (ldb == 0)
                bp = b + j0 / (16 * k_nv) * panel_stride + k0 * 16 * k_nv;
            else if (ldb == 16 * k_nv)
                bp = b + k0 * ldb;
            else
                copy_panel(b + k0 * ldb + j0, ldb, kc, nv, tail, panel);
            for (std::int64_t i0 = 0; i0 < m; i0 += k_mr) {
                const int mr = static_cast<int>(std::min<std::int64_t>(k_mr, m - i0));
                const tile_args t{kc,
                                  a + i0 * a_rs + k0 * a_ks,
                                  a_rs,
                                  a_ks,
                                  bp,
                                  16 * k_nv,
                                  c + i0 * ldc + j0,
                                  ldc,
                                  alpha,
                                  accumulate || k0 > 0,
                                  tail,
                                  lane_max ? lane_max + 16 * i0 : nullptr,
                                  nullptr};
                for (std::int64_t e = std::min(pf_lines, pf_next + pf_slice); pf_next < e;
                     ++pf_next)
                    _mm_prefetch(reinterpret_cast<const char*>(pf + 16 * pf_next), _MM_HINT_T1);
                micro_of(mr, nv)(t);
            }
        }
    }
}

/// r[0, 16) as a 16 x 16 block transposed in registers: r[c] lane i = r[i] lane c before.
RINGSCALE_AVX512 inline void transpose_16x16(__m512 (&r)[16]) {
    // The masked forms with a full mask: GCC 12 warns of an uninitialised operand in the plain
    // ones.
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) { // 32-bit pairs
        t[i] = _mm512_mask_unpacklo_ps(r[i], 0xFFFF, r[i], r[i + 1]);
        t[i + 1] = _mm512_mask_unpackhi_ps(r[i], 0xFFFF, r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) { // 64-bit pairs
        r[i] = _mm512_mask_shuffle_ps(t[i], 0xFFFF, t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_mask_shuffle_ps(t[i], 0xFFFF, t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_mask_shuffle_ps(t[i + 1], 0xFFFF, t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_mask_shuffle_ps(t[i + 1], 0xFFFF, t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; ++i) { // 128-bit quarters, rows 4 apart, then 8 apart
        t[i] = _mm512_mask_shuffle_f32x4(r[i], 0xFFFF, r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_mask_shuffle_f32x4(r[i], 0xFFFF, r[i], r[i + 4], 0xDD);
        t[i + 8] = _mm512_mask_shuffle_f32x4(r[i + 8], 0xFFFF, r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_mask_shuffle_f32x4(r[i + 8], 0xFFFF, r[i + 8], r[i + 12], 0xDD);
    }
    for (int i = 0; i < 8; ++i) {
        r[i] = _mm512_mask_shuffle_f32x4(t[i], 0xFFFF, t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_mask_shuffle_f32x4(t[i], 0xFFFF, t[i], t[i + 8], 0xDD);
    }
}

/// pack_transposed by 16 x 16 blocks: 16 rows of src read whole (a stream the hardware
/// prefetches, where a column walk is not), transposed in registers, stored as 16 panel rows.
RINGSCALE_AVX512 void pack_transposed_avx512(const float* src, std::int64_t n, std::int64_t k,
                                             std::int64_t ld, float* dst) {
    for (std::int64_t j0 = 0; j0 < n; j0 += 64, dst += 64 * k)
        for (std::int64_t jb = 0; jb < 64; jb += 16)
            for (std::int64_t k0 = 0; k0 < k; k0 += 16) {
                const std::int64_t kn = std::min<std::int64_t>(16, k - k0);
                const auto cols = static_cast<__mmask16>((1u << kn) - 1);
                __m512 r[16];
                for (int i = 0; i < 16; ++i) // rows past n: the panel's zero padding
                    r[i] = j0 + jb + i < n
                               ? _mm512_maskz_loadu_ps(cols, src + (j0 + jb + i) * ld + k0)
                               : _mm512_setzero_ps();
                transpose_16x16(r);
                for (std::int64_t c = 0; c < kn; ++c)
                    _mm512_storeu_ps(dst + (k0 + c) * 64 + jb, r[c]);
            }
}

constexpr std::int64_t k_pack_ahead = 8; // rows pack_panels fetches ahead

/// pack_panels by masked vector copies, the padding zeroed by the same stores: no call per row
/// (std::copy of a 64-float row went through memmove, 1.6% of the training step's time).
RINGSCALE_AVX512 void pack_panels_avx512(const float* src, std::int64_t k, std::int64_t n,
                                         std::int64_t ld, float* dst) {
    for (std::int64_t j0 = 0; j0 < n; j0 += 64, dst += 64 * k) {
        const std::int64_t cols = std::min<std::int64_t>(64, n - j0);
        __mmask16 lanes[k_nv];
        for (int v = 0; v < k_nv; ++v) {
            const std::int64_t w = std::clamp<std::int64_t>(cols - 16 * v, 0, 16);
            lanes[v] = static_cast<__mmask16>((1u << w) - 1);
        }
        for (std::int64_t kk = 0; kk < k; ++kk) {
            const float* s = src + kk * ld + j0;
            float* d = dst + kk * 64;
            // The row k_pack_ahead on, on its way: rows a page or more apart defeat the hardware's
            // prefetch, and B is cold (a layer's weights, or its activations from the forward).
            if (kk + k_pack_ahead < k)
                for (int v = 0; v < k_nv; ++v)
                    _mm_prefetch(reinterpret_cast<const char*>(s + k_pack_ahead * ld + 16 * v),
                                 _MM_HINT_T0);
            for (int v = 0; v < k_nv; ++v)
                _mm512_storeu_ps(d + 16 * v, _mm512_maskz_loadu_ps(lanes[v], s + 16 * v));
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
    ld = ld > 0 ? ld : k;
#ifdef RINGSCALE_HAVE_AVX512_TILES
    if (tile_gemm_avx512())
        return pack_transposed_avx512(src, n, k, ld, dst);
#endif
    for (std::int64_t j0 = 0; j0 < n; j0 += 64, dst += 64 * k) {
        const std::int64_t cols = std::min<std::int64_t>(64, n - j0);
        for (std::int64_t kk = 0; kk < k; ++kk) {
            float* d = dst + kk * 64;
            for (std::int64_t j = 0; j < cols; ++j)
                d[j] = src[(j0 + j) * ld + kk];
            std::fill(d + cols, d + 64, 0.0f);
        }
    }
}

void pack_panels(const float* src, std::int64_t k, std::int64_t n, std::int64_t ld, float* dst) {
#ifdef RINGSCALE_HAVE_AVX512_TILES
    if (tile_gemm_avx512())
        return pack_panels_avx512(src, k, n, ld, dst);
#endif
    for (std::int64_t j0 = 0; j0 < n; j0 += 64, dst += 64 * k) {
        const std::int64_t cols = std::min<std::int64_t>(64, n - j0);
        for (std::int64_t kk = 0; kk < k; ++kk) {
            std::copy(src + kk * ld + j0, src + kk * ld + j0 + cols, dst + kk * 64);
            std::fill(dst + kk * 64 + cols, dst + kk * 64 + 64, 0.0f);
        }
    }
}

bool tile_gemm_nt(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                  const float* b, const float* bt, float* c, std::int64_t ldc, float* lane_max,
                  const float* pf, std::int64_t pf_floats) {
#ifdef RINGSCALE_HAVE_AVX512_TILES
    if (tile_gemm_avx512()) {
        lane_max = k <= k_kc ? lane_max : nullptr; // one block of k: the maxima are of C
        gemm_avx512(m, n, k, alpha, a, k, 1, bt, 0, false, c, ldc, lane_max, 64 * k, pf, pf_floats);
        return lane_max != nullptr;
    }
#endif
    (void)bt, (void)lane_max, (void)pf, (void)pf_floats;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(m), int(n), int(k), alpha, a, int(k),
                b, int(k), 0.0f, c, int(ldc));
    return false;
}

void tile_gemm_nn_acc(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                      std::int64_t ldc, const float* b_panels, std::int64_t b_rows, const float* pf,
                      std::int64_t pf_floats) {
#ifdef RINGSCALE_HAVE_AVX512_TILES
    if (tile_gemm_avx512())
        return b_panels ? gemm_avx512(m, n, k, 1.0f, a, lda, 1, b_panels, 0, true, c, ldc, nullptr,
                                      64 * b_rows, pf, pf_floats)
                        : gemm_avx512(m, n, k, 1.0f, a, lda, 1, b, ldb, true, c, ldc);
#endif
    (void)b_panels, (void)pf, (void)pf_floats;
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
