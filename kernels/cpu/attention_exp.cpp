#include "kernels/cpu/attention_exp.hpp"
#include "kernels/cpu/exp2_avx512.hpp"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RINGSCALE_AVX512 __attribute__((target("avx512f")))
#endif

namespace ringscale::kernels::cpu {

#ifdef RINGSCALE_AVX512

namespace {

/// The sum of x's lanes by halves: 8 pairs, then 4, 2, 1.
RINGSCALE_AVX512 inline float sum_by_halves(__m512 x) {
    x = _mm512_add_ps(x, _mm512_mask_shuffle_f32x4(x, 0xFFFF, x, x, 0x4E)); // lane l + lane l + 8
    x = _mm512_add_ps(x, _mm512_mask_shuffle_f32x4(x, 0xFFFF, x, x, 0xB1)); // l + 4
    x = _mm512_add_ps(x, _mm512_shuffle_ps(x, x, 0x4E));                    // l + 2
    x = _mm512_add_ps(x, _mm512_shuffle_ps(x, x, 0xB1));                    // l + 1
    return _mm512_cvtss_f32(x);
}

/// The maximum of x's lanes by halves, as the portable row_max: lane l against lane l + w.
RINGSCALE_AVX512 inline float max_by_halves(__m512 x) {
    // vmaxps keeps its first operand where it is the greater: the upper half's lane, as there.
    x = _mm512_mask_max_ps(x, 0xFFFF, _mm512_mask_shuffle_f32x4(x, 0xFFFF, x, x, 0x4E), x);
    x = _mm512_mask_max_ps(x, 0xFFFF, _mm512_mask_shuffle_f32x4(x, 0xFFFF, x, x, 0xB1), x);
    x = _mm512_mask_max_ps(x, 0xFFFF, _mm512_shuffle_ps(x, x, 0x4E), x);
    x = _mm512_mask_max_ps(x, 0xFFFF, _mm512_shuffle_ps(x, x, 0xB1), x);
    return _mm512_cvtss_f32(x);
}

} // namespace

RINGSCALE_AVX512 float row_exp2_sum_avx512(float* x, std::int64_t n, float m) {
    const __m512 vm = _mm512_set1_ps(m);
    __m512 sum = _mm512_setzero_ps();
    std::int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        const __m512 e = exp2_16(_mm512_sub_ps(_mm512_loadu_ps(x + j), vm));
        _mm512_storeu_ps(x + j, e);
        sum = _mm512_add_ps(sum, e);
    }
    float tail_sum = 0.0f;
    if (j < n) { // the row's last entries, summed one by one after the lanes as the portable
        const auto tail = static_cast<__mmask16>((1u << (n - j)) - 1); // path sums them
        _mm512_mask_storeu_ps(x + j, tail,
                              exp2_16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + j), vm)));
        for (; j < n; ++j)
            tail_sum += x[j];
    }
    return tail_sum + sum_by_halves(sum);
}

RINGSCALE_AVX512 float row_max_avx512(const float* x, std::int64_t n) {
    const __m512 none = _mm512_set1_ps(-INFINITY);
    __m512 acc = none;
    std::int64_t j = 0;
    for (; j + 16 <= n; j += 16) // vmaxps keeps acc where x is NaN, as x > acc ? x : acc
        acc = _mm512_mask_max_ps(acc, 0xFFFF, _mm512_loadu_ps(x + j), acc);
    float m = -INFINITY;
    if (j < n) { // the last n mod 16 in one masked vector, not a chain of compares; a NaN
        const auto tail = static_cast<__mmask16>((1u << (n - j)) - 1); // there is passed over
        m = max_by_halves(_mm512_mask_max_ps(none, tail, _mm512_maskz_loadu_ps(tail, x + j), none));
    }
    const float l = max_by_halves(acc);
    return l > m ? l : m;
}

RINGSCALE_AVX512 void softmax_whole_rows_avx512(float* s, std::int64_t rows, std::int64_t cols,
                                                const float* lanes, float* row_max, float* row_sum,
                                                float* o, std::int64_t dim) {
    for (std::int64_t r = 0; r < rows; ++r, s += cols, o += dim) {
        const float tile_max = max_by_halves(_mm512_loadu_ps(lanes + 16 * r));
        if (tile_max == -INFINITY) { // no finite score in the row
            std::fill(s, s + cols, 0.0f);
            continue;
        }
        const float m_old = row_max[r];
        const float m_new = std::max(m_old, tile_max);
        const float sum = row_exp2_sum_avx512(s, cols, m_new);
        const float a = std::exp2(m_old - m_new); // 0 when nothing was seen yet
        row_sum[r] = row_sum[r] * a + sum;
        row_max[r] = m_new;
        if (a == 1.0f)
            continue;
        const __m512 va = _mm512_set1_ps(a);
        for (std::int64_t d = 0; d < dim; d += 16) // a == 0: cleared, whatever O held
            _mm512_storeu_ps(o + d, a == 0.0f ? _mm512_setzero_ps()
                                              : _mm512_mul_ps(va, _mm512_loadu_ps(o + d)));
    }
}

#else

// Never called: tile_gemm_avx512() is false off x86-64.
float row_max_avx512(const float*, std::int64_t) {
    return 0.0f;
}
float row_exp2_sum_avx512(float*, std::int64_t, float) {
    return 0.0f;
}
void softmax_whole_rows_avx512(float*, std::int64_t, std::int64_t, const float*, float*, float*,
                               float*, std::int64_t) {}

#endif

} // namespace ringscale::kernels::cpu
