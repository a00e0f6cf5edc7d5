#include "kernels/cpu/gelu.hpp"

#include "kernels/cpu/attention_gemm.hpp"
#include "kernels/cpu/exp2_avx512.hpp"
#include "kernels/cpu/vec_math.hpp"
#include "kernels/parallel.hpp"

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RINGSCALE_GELU_AVX512 __attribute__((target("avx512f")))
#endif

namespace ringscale::kernels::cpu {

namespace {
constexpr float sqrt_2_over_pi = 0.7978845608028654f;
constexpr float cubic = 0.044715f;
// Elements per thread below which splitting costs more than it saves.
constexpr std::size_t grain = 1 << 15;

// tanh(u) = (e^{2u} − 1) / (e^{2u} + 1), u clamped to ±9 where fp32 tanh is exactly ±1.
// Absolute error ~1e-7 (relative precision is lost only near 0, where GELU multiplies by x).
inline float tanh_fast(float u) {
    u = std::min(std::max(u, -9.0f), 9.0f);
    const float e = exp_poly(2.0f * u);
    return (e - 1.0f) / (e + 1.0f);
}

RINGSCALE_VEC_CLONES void gelu_fwd_range(std::size_t begin, std::size_t end, const float* x,
                                         float* y) {
    for (std::size_t k = begin; k < end; ++k) {
        const float v = x[k];
        const float u = sqrt_2_over_pi * (v + cubic * v * v * v);
        y[k] = 0.5f * v * (1.0f + tanh_fast(u));
    }
}

RINGSCALE_VEC_CLONES void gelu_bwd_range(std::size_t begin, std::size_t end, const float* x,
                                         const float* dy, float* dx) {
    for (std::size_t k = begin; k < end; ++k) {
        const float v = x[k];
        const float t = tanh_fast(sqrt_2_over_pi * (v + cubic * v * v * v));
        const float du = sqrt_2_over_pi * (1.0f + 3.0f * cubic * v * v);
        const float grad = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
        dx[k] = dy[k] * grad;
    }
}

#ifdef RINGSCALE_GELU_AVX512

// AVX-512 by hand: 0.5·x·(1 + tanh u) = x·s with s = 1 / (1 + e^{-2u}), e^{-2u} = 2^z with
// z = −2·log2(e)·u, and s by vrcp14ps and one Newton step (relative error ~2^-28): no division.
// The vectorised loops above spend ~35 cycles on 16 elements (one vdivps among ~38
// instructions); 1024 x 2048 on one Zen 4 core took the forward from 1.22 to 0.70-0.85 ms and
// the backward from 1.62 to 1.10-1.55 (tests/bench/README.md), where memory starts to bound it.
constexpr float z_per_x = -2.0f * sqrt_2_over_pi * 1.44269504088896341f;

/// s = 1 / (1 + e^{-2u}) for 16 lanes of x; z clamped to ±126 so that 1 + 2^z stays finite
/// (s is then exactly 1, or below 1e-37). NaN stays NaN.
RINGSCALE_GELU_AVX512 inline __m512 gelu_s(__m512 v, __m512 v2) {
    // The masked forms throughout: GCC 12's plain ones warn of an uninitialised operand.
    __m512 z = _mm512_mul_ps(
        v, _mm512_fmadd_ps(_mm512_set1_ps(z_per_x * cubic), v2, _mm512_set1_ps(z_per_x)));
    z = _mm512_mask_min_ps(z, 0xFFFF, _mm512_set1_ps(126.0f), z); // exp2_16 clamps at -126
    const __m512 d = _mm512_add_ps(_mm512_set1_ps(1.0f), exp2_16(z));
    const __m512 r = _mm512_mask_rcp14_ps(d, 0xFFFF, d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
}

RINGSCALE_GELU_AVX512 void gelu_fwd_avx512(std::size_t begin, std::size_t end, const float* x,
                                           float* y) {
    for (std::size_t k = begin; k < end; k += 16) {
        const auto lanes = static_cast<__mmask16>(end - k >= 16 ? 0xFFFF : (1u << (end - k)) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(lanes, x + k);
        const __m512 s = gelu_s(v, _mm512_mul_ps(v, v));
        _mm512_mask_storeu_ps(y + k, lanes, _mm512_mul_ps(v, s));
    }
}

// gelu'(x) = 0.5·(1 + t) + 0.5·x·(1 − t²)·u' with t = 2s − 1: s + 2·x·s·(1 − s)·u'.
RINGSCALE_GELU_AVX512 void gelu_bwd_avx512(std::size_t begin, std::size_t end, const float* x,
                                           const float* dy, float* dx) {
    const __m512 one = _mm512_set1_ps(1.0f);
    for (std::size_t k = begin; k < end; k += 16) {
        const auto lanes = static_cast<__mmask16>(end - k >= 16 ? 0xFFFF : (1u << (end - k)) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(lanes, x + k);
        const __m512 v2 = _mm512_mul_ps(v, v);
        const __m512 s = gelu_s(v, v2);
        const __m512 du = _mm512_fmadd_ps(_mm512_set1_ps(3.0f * cubic * sqrt_2_over_pi), v2,
                                          _mm512_set1_ps(sqrt_2_over_pi));
        const __m512 t = _mm512_mul_ps(_mm512_mul_ps(v, _mm512_sub_ps(one, s)), du);
        const __m512 grad = _mm512_fmadd_ps(_mm512_add_ps(s, s), t, s);
        _mm512_mask_storeu_ps(dx + k, lanes,
                              _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, dy + k), grad));
    }
}

#endif

} // namespace

void gelu_fwd(std::size_t n, const float* x, float* y) {
    parallel_for(n, grain, [&](std::size_t b, std::size_t e) {
#ifdef RINGSCALE_GELU_AVX512
        if (tile_gemm_avx512())
            return gelu_fwd_avx512(b, e, x, y);
#endif
        gelu_fwd_range(b, e, x, y);
    });
}

void gelu_bwd(std::size_t n, const float* x, const float* dy, float* dx) {
    parallel_for(n, grain, [&](std::size_t b, std::size_t e) {
#ifdef RINGSCALE_GELU_AVX512
        if (tile_gemm_avx512())
            return gelu_bwd_avx512(b, e, x, dy, dx);
#endif
        gelu_bwd_range(b, e, x, dy, dx);
    });
}

} // namespace ringscale::kernels::cpu
