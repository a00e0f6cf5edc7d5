#include "kernels/cpu/attention_row_ops.hpp"

#include "kernels/cpu/attention_exp.hpp"
#include "kernels/cpu/attention_gemm.hpp"
#include "kernels/cpu/vec_math.hpp"

#include <algorithm>
#include <limits>

namespace ringscale::kernels::cpu {

namespace {
constexpr float k_neg_inf = -std::numeric_limits<float>::infinity();
constexpr int k_lanes = 16; // one AVX-512 register; two AVX2 registers
} // namespace

/// Maximum of x[0, n); -inf when n == 0. Lane-wise partials let GCC vectorise without
/// -ffast-math.
RINGSCALE_VEC_CLONES float row_max_portable(const float* x, std::int64_t n) {
    float lanes[k_lanes];
    for (int l = 0; l < k_lanes; ++l)
        lanes[l] = k_neg_inf;
    std::int64_t j = 0;
    for (; j + k_lanes <= n; j += k_lanes)
        for (int l = 0; l < k_lanes; ++l)
            lanes[l] = x[j + l] > lanes[l] ? x[j + l] : lanes[l];
    float m = k_neg_inf;
    for (; j < n; ++j)
        m = x[j] > m ? x[j] : m;
    for (int w = k_lanes / 2; w > 0; w /= 2) // by halves, as row_exp2_sum's sum
        for (int l = 0; l < w; ++l)
            lanes[l] = lanes[l + w] > lanes[l] ? lanes[l + w] : lanes[l];
    return lanes[0] > m ? lanes[0] : m;
}

/// x[j] = 2^(x[j] - m) for j < n, in place; returns the sum.
RINGSCALE_VEC_CLONES float row_exp2_sum_portable(float* x, std::int64_t n, float m) {
    float lanes[k_lanes] = {};
    std::int64_t j = 0;
    for (; j + k_lanes <= n; j += k_lanes)
        for (int l = 0; l < k_lanes; ++l) {
            const float e = exp2_poly(x[j + l] - m);
            x[j + l] = e;
            lanes[l] += e;
        }
    float sum = 0.0f;
    for (; j < n; ++j) {
        x[j] = exp2_poly(x[j] - m);
        sum += x[j];
    }
    // The lanes by halves (vector adds), not one after another: a chain of 16 scalar adds
    // cost a quarter of the call on a 256-key row.
    for (int w = k_lanes / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l)
            lanes[l] += lanes[l + w];
    return sum + lanes[0];
}

/// Maximum of x[0, n); -inf when n == 0 (on AVX-512 the last n mod 16 in one masked vector).
float row_max(const float* x, std::int64_t n) {
    return tile_gemm_avx512() ? row_max_avx512(x, n) : row_max_portable(x, n);
}

/// x[j] = 2^(x[j] - m) for j < n, in place; returns the sum (on AVX-512 by vscalefps).
float row_exp2_sum(float* x, std::int64_t n, float m) {
    return tile_gemm_avx512() ? row_exp2_sum_avx512(x, n, m) : row_exp2_sum_portable(x, n, m);
}

/// dS = P * (dP - delta) * scale, in place over dp, n entries (P unrounded, as on CUDA).
RINGSCALE_VEC_CLONES void row_ds(const float* p, float* dp, std::int64_t n, float delta,
                                 float scale) {
    for (std::int64_t j = 0; j < n; ++j)
        dp[j] = p[j] * (dp[j] - delta) * scale;
}

/// x[0, n) rounded to bf16 (elem::bf16) or fp16 (elem::f16) in place; f32 leaves x as is.
RINGSCALE_VEC_CLONES void row_round(float* x, std::int64_t n, elem e) {
    if (e == elem::bf16)
        for (std::int64_t j = 0; j < n; ++j)
            x[j] = round_to_bf16(x[j]);
    else if (e == elem::f16)
        for (std::int64_t j = 0; j < n; ++j)
            x[j] = round_to_f16(x[j]);
}

/// x[0, n) *= a.
RINGSCALE_VEC_CLONES void row_scale(float* x, std::int64_t n, float a) {
    for (std::int64_t j = 0; j < n; ++j)
        x[j] *= a;
}

void row_zero(float* x, std::int64_t n) {
    std::fill(x, x + n, 0.0f);
}

/// x[j] = 0 where x[j] <= FLT_MIN: exp2_poly of a -inf score (a key the mask drops inside a
/// row's key range) is clamped to exactly FLT_MIN; anything that small contributes nothing.
RINGSCALE_VEC_CLONES void row_zero_clamped(float* x, std::int64_t n) {
    const float tiny = std::numeric_limits<float>::min();
    for (std::int64_t j = 0; j < n; ++j)
        x[j] = x[j] <= tiny ? 0.0f : x[j];
}

} // namespace ringscale::kernels::cpu
