#include "analysis/statistics/bootstrap.hpp"

#include <gtest/gtest.h>

using namespace ringscale::analysis;

TEST(stats_bootstrap, splitmix64_reference_vector) {
    // Published splitmix64 outputs for seed 0.
    splitmix64 rng(0);
    EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
    EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
    EXPECT_EQ(rng.next(), 0x06c45d188009454fULL);
}

TEST(stats_bootstrap, index_is_multiply_shift) {
    splitmix64 a(0);
    splitmix64 b(0);
    const std::uint64_t x = b.next();
    EXPECT_EQ(a.index(10),
              static_cast<std::size_t>((static_cast<unsigned __int128>(x) * 10) >> 64));
}

TEST(stats_bootstrap, median_inplace) {
    std::vector<double> even = {5, 1, 4, 2};
    EXPECT_DOUBLE_EQ(median_inplace(even), 3.0);
    std::vector<double> odd = {3, 1, 2};
    EXPECT_DOUBLE_EQ(median_inplace(odd), 2.0);
}

TEST(stats_bootstrap, percentile_interval_type7) {
    std::vector<double> v;
    for (int i = 0; i <= 100; ++i)
        v.push_back(i);
    const interval ci = percentile_interval(v, 0.95);
    EXPECT_DOUBLE_EQ(ci.lo, 2.5); // h = 100 * 0.025
    EXPECT_DOUBLE_EQ(ci.hi, 97.5);
}

TEST(stats_bootstrap, constant_samples_give_a_point_interval) {
    const interval ci = bootstrap_two_sample(
        {2, 2, 2}, {4, 4, 4, 4}, [](double a, double b) { return a / b; }, 500, 7);
    EXPECT_DOUBLE_EQ(ci.lo, 0.5);
    EXPECT_DOUBLE_EQ(ci.hi, 0.5);
}

TEST(stats_bootstrap, fixed_seed_is_reproducible_and_exact) {
    // Reference: an independent Python re-implementation of splitmix64, multiply-shift index
    // draws (a then b per replicate), medians and type-7 percentiles gives [1/3, 2] for
    // median(a) / median(b), a = {1..5}, b = {2, 3, 4}, B = 1000, seed 42.
    const std::vector<double> a = {1, 2, 3, 4, 5};
    const std::vector<double> b = {2, 3, 4};
    auto ratio = [](double x, double y) { return x / y; };
    const interval r1 = bootstrap_two_sample(a, b, ratio, 1000, 42);
    const interval r2 = bootstrap_two_sample(a, b, ratio, 1000, 42);
    EXPECT_EQ(r1.lo, r2.lo);
    EXPECT_EQ(r1.hi, r2.hi);
    EXPECT_DOUBLE_EQ(r1.lo, 1.0 / 3.0);
    EXPECT_DOUBLE_EQ(r1.hi, 2.0);
}
