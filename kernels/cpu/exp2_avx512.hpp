// 2^x for 16 lanes on AVX-512, the one polynomial the hand-written CPU loops share (the
// attention softmax, kernels/cpu/attention_exp.cpp; GELU, kernels/cpu/gelu.cpp): the split and
// polynomial of the portable exp2_poly (kernels/cpu/vec_math.hpp), 2^n applied by vscalefps.
// Compiled for AVX-512F by attribute; call it only where the CPU has it.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define RINGSCALE_HAVE_EXP2_AVX512 1

namespace ringscale::kernels::cpu {

/// 2^x for 16 lanes, x <= ~0: x clamped at -126 (so a -inf score gives exactly FLT_MIN, which
/// the masked rows rely on), n = round(x), f = x - n, 2^f by the polynomial, scaled by 2^n.
/// A NaN stays NaN (vmaxps returns its second operand where one is NaN).
__attribute__((target("avx512f"))) inline __m512 exp2_16(__m512 x) {
    // The masked forms throughout: GCC 12's plain ones warn of an uninitialised operand.
    x = _mm512_mask_max_ps(x, 0xFFFF, _mm512_set1_ps(-126.0f), x);
    const __m512 n =
        _mm512_mask_roundscale_ps(x, 0xFFFF, x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(x, n);
    __m512 p = _mm512_set1_ps(1.535336188319500e-4f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.339887440266574e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618437357674640e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550332471162809e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402264791363012e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931472028550421e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_mask_scalef_ps(p, 0xFFFF, p, n);
}

} // namespace ringscale::kernels::cpu

#endif
