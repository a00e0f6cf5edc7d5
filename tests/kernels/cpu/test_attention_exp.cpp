// The softmax's AVX-512 exponential and online-softmax step (kernels/cpu/attention_exp.hpp)
// against exp2 in double: the polynomial's 2e-7 relative error, the clamp that maps a -inf
// score to exactly FLT_MIN (the masked rows rely on it), NaN kept, rows of every tail length;
// and the step's running max, sum, P and rescaled O against the same step in double.
#include "kernels/cpu/attention_exp.hpp"
#include "kernels/cpu/attention_gemm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace ringscale::kernels::cpu;

namespace {

constexpr float k_inf = std::numeric_limits<float>::infinity();

/// Scores in (-40, 0] that vary along the row.
std::vector<float> scores(std::int64_t n, int seed) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        v[i] = -static_cast<float>((i * 37 + seed * 11) % 641) / 16.0f;
    return v;
}

} // namespace

TEST(attention_exp, rows_of_every_tail_length_are_exp2_within_its_polynomial) {
    if (!tile_gemm_avx512())
        GTEST_SKIP() << "the CPU has no AVX-512F: the portable exp2 runs instead";
    for (std::int64_t n = 1; n <= 70; ++n) {
        std::vector<float> x = scores(n, int(n));
        const std::vector<float> in = x;
        const float m = -1.5f;
        const float sum = row_exp2_sum_avx512(x.data(), n, m);
        double want_sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            const double want = std::exp2(double(in[j]) - m);
            ASSERT_NEAR(x[j], want, 3e-7 * want) << "n " << n << " at " << j;
            want_sum += want;
        }
        ASSERT_NEAR(sum, want_sum, 1e-6 * want_sum) << "n " << n;
    }
}

TEST(attention_exp, minus_infinity_gives_the_smallest_normal_and_nan_stays_nan) {
    if (!tile_gemm_avx512())
        GTEST_SKIP() << "the CPU has no AVX-512F: the portable exp2 runs instead";
    std::vector<float> x = {-k_inf, -500.0f, std::nanf(""), 0.0f};
    const float sum = row_exp2_sum_avx512(x.data(), 4, 0.0f);
    EXPECT_EQ(x[0], std::numeric_limits<float>::min());
    EXPECT_EQ(x[1], std::numeric_limits<float>::min());
    EXPECT_TRUE(std::isnan(x[2]));
    EXPECT_EQ(x[3], 1.0f);
    EXPECT_TRUE(std::isnan(sum));
}

TEST(attention_exp, the_online_step_updates_max_sum_p_and_o_as_in_double) {
    if (!tile_gemm_avx512())
        GTEST_SKIP() << "the CPU has no AVX-512F: the portable softmax runs instead";
    const std::int64_t rows = 4, cols = 40, dim = 32;
    std::vector<float> s(rows * cols), lanes(rows * 16, -k_inf);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cols; ++j) {
            s[r * cols + j] = scores(cols, int(r))[j] + float(r);
            lanes[r * 16 + j % 16] = std::max(lanes[r * 16 + j % 16], s[r * cols + j]);
        }
    std::fill(lanes.begin() + 3 * 16, lanes.end(), -k_inf); // row 3: no finite score
    // Row 0 saw nothing yet (its O is cleared, whatever it held), row 1 a smaller max (O
    // rescaled), row 2 a larger one (this tile's max is not a new one: O unchanged).
    std::vector<float> row_max = {-k_inf, -3.0f, 50.0f, 2.0f}, row_sum = {0.0f, 2.0f, 3.0f, 4.0f};
    std::vector<float> o(rows * dim, 7.0f);
    const std::vector<float> s0 = s, max0 = row_max, sum0 = row_sum;
    softmax_whole_rows_avx512(s.data(), rows, cols, lanes.data(), row_max.data(), row_sum.data(),
                              o.data(), dim);
    for (std::int64_t r = 0; r < 3; ++r) {
        double tile_max = -k_inf;
        for (std::int64_t j = 0; j < cols; ++j)
            tile_max = std::max(tile_max, double(s0[r * cols + j]));
        const double m = std::max(double(max0[r]), tile_max), a = std::exp2(max0[r] - m);
        double sum = 0;
        for (std::int64_t j = 0; j < cols; ++j) {
            const double p = std::exp2(s0[r * cols + j] - m);
            sum += p;
            ASSERT_NEAR(s[r * cols + j], p, 3e-7 * p + 1e-30) << r << ", " << j;
        }
        EXPECT_EQ(row_max[r], float(m)) << r;
        EXPECT_NEAR(row_sum[r], sum0[r] * a + sum, 1e-6 * (sum0[r] * a + sum)) << r;
        for (std::int64_t d = 0; d < dim; ++d)
            ASSERT_NEAR(o[r * dim + d], 7.0 * a, 1e-6 * 7.0) << r << ", " << d;
    }
    for (std::int64_t j = 0; j < cols; ++j)
        ASSERT_EQ(s[3 * cols + j], 0.0f) << j; // row 3: P is zero, its state and O untouched
    EXPECT_EQ(row_max[3], 2.0f);
    EXPECT_EQ(row_sum[3], 4.0f);
    EXPECT_EQ(o[3 * dim], 7.0f);
}

TEST(attention_exp, the_row_maximum_of_every_length_and_position_passing_over_nans) {
    if (!tile_gemm_avx512())
        GTEST_SKIP() << "the CPU has no AVX-512F: the portable row_max runs instead";
    EXPECT_EQ(row_max_avx512(nullptr, 0), -k_inf);
    for (std::int64_t n = 1; n <= 70; ++n) {
        // The maximum at every position in turn, in the whole vectors and in the tail, with a
        // NaN and -inf beside it.
        for (std::int64_t at = 0; at < n; ++at) {
            std::vector<float> x = scores(n, int(n + at));
            for (float& v : x)
                v = std::min(v, -0.5f);
            x[at] = 3.0f;
            x[(at + 1) % n] = n > 1 ? std::nanf("") : x[(at + 1) % n];
            x[(at + 2) % n] = n > 2 ? -k_inf : x[(at + 2) % n];
            ASSERT_EQ(row_max_avx512(x.data(), n), 3.0f) << "n " << n << " at " << at;
        }
    }
    std::vector<float> only_nan = {std::nanf(""), std::nanf(""), std::nanf("")};
    EXPECT_EQ(row_max_avx512(only_nan.data(), 3), -k_inf); // as the portable path: none seen
    std::vector<float> all_low = std::vector<float>(33, -k_inf);
    EXPECT_EQ(row_max_avx512(all_low.data(), 33), -k_inf);
}
