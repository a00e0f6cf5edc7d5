#include "analysis/statistics/descriptive.hpp"

#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale::analysis;

TEST(stats_descriptive, quantiles_interpolate_linearly_type7) {
    // h = (n-1) q; x[floor h] + frac(h) * (x[floor h + 1] - x[floor h])
    const std::vector<double> v = {1, 2, 3, 4};
    EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.10), 1.3); // h = 0.3
    EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.90), 3.7); // h = 2.7
    EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.0), 1.0);
    EXPECT_DOUBLE_EQ(quantile_sorted(v, 1.0), 4.0);
    EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
    std::vector<double> hundred;
    for (int i = 1; i <= 100; ++i)
        hundred.push_back(i);
    EXPECT_DOUBLE_EQ(quantile_sorted(hundred, 0.99), 99.01); // h = 98.01
    EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
}

TEST(stats_descriptive, moments) {
    const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
    EXPECT_DOUBLE_EQ(mean(v), 5.0);
    // sum of squares 32, sample variance 32 / 7
    EXPECT_DOUBLE_EQ(stddev(v), std::sqrt(32.0 / 7.0));
    EXPECT_DOUBLE_EQ(coefficient_of_variation(v), std::sqrt(32.0 / 7.0) / 5.0);
    EXPECT_TRUE(std::isnan(stddev({1.0})));
}

TEST(stats_descriptive, median_ci_ranks_match_binomial_table) {
    // Largest l with P(Bin(n, 1/2) <= l - 1) <= 0.025; u = n + 1 - l (Le Boudec, table A.1).
    EXPECT_FALSE(median_ci_ranks(5).has_value()); // 2 / 32 > 0.05: no 95% interval
    struct row {
        std::size_t n, lo, hi;
        double coverage;
    };
    const row rows[] = {{6, 1, 6, 1 - 2.0 / 64},
                        {9, 2, 8, 1 - 20.0 / 512},
                        {10, 2, 9, 1 - 22.0 / 1024},
                        {20, 6, 15, 0.9586105346679688},
                        {50, 18, 33, 0.9671608624357315},
                        {100, 40, 61, 0.9647997997822952},
                        {1000, 469, 532, 0.9537088026395019}};
    for (const row& r : rows) {
        auto ci = median_ci_ranks(r.n);
        ASSERT_TRUE(ci.has_value()) << r.n;
        EXPECT_EQ(ci->lower, r.lo) << r.n;
        EXPECT_EQ(ci->upper, r.hi) << r.n;
        EXPECT_NEAR(ci->coverage, r.coverage, 1e-12) << r.n;
    }
}

TEST(stats_descriptive, median_ci_takes_order_statistics) {
    std::vector<double> v;
    for (int i = 1; i <= 10; ++i)
        v.push_back(10.0 * i);
    const estimate e = median_ci_sorted(v);
    EXPECT_DOUBLE_EQ(e.value, 55.0);
    EXPECT_DOUBLE_EQ(e.lo, 20.0); // x_(2)
    EXPECT_DOUBLE_EQ(e.hi, 90.0); // x_(9)
    const estimate small = median_ci_sorted({1, 2, 3});
    EXPECT_DOUBLE_EQ(small.value, 2.0);
    EXPECT_TRUE(std::isnan(small.lo));
}

TEST(stats_descriptive, tukey_fences) {
    const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 100};
    const tukey_fences f = tukey_fences_sorted(v);
    EXPECT_DOUBLE_EQ(f.q1, 3.25); // h = 2.25
    EXPECT_DOUBLE_EQ(f.q3, 7.75); // h = 6.75
    EXPECT_DOUBLE_EQ(f.lower, 3.25 - 1.5 * 4.5);
    EXPECT_DOUBLE_EQ(f.upper, 7.75 + 1.5 * 4.5);
    EXPECT_EQ(count_outside(v, f), 1u);
    EXPECT_EQ(remove_outside(v, f).size(), 9u);
    EXPECT_EQ(count_outside({1, 1, 1, 1}, tukey_fences_sorted({1, 1, 1, 1})), 0u);
}
