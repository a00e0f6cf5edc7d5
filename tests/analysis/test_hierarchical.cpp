#include "analysis/statistics/hierarchical.hpp"
#include "analysis/statistics/launch_test.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <set>

using namespace ringscale::analysis;

namespace {

auto ratio = [](double x, double y) { return x / y; };

/// Launches of `n` iterations: launch l is offset[l] + i / (100 n), i = 0..n-1.
launch_samples grouped(const std::vector<double>& offset, int n) {
    launch_samples out;
    for (double o : offset) {
        out.emplace_back();
        for (int i = 0; i < n; ++i)
            out.back().push_back(o + i / (100.0 * n));
    }
    return out;
}

} // namespace

TEST(stats_hierarchical, one_launch_is_exactly_the_iteration_bootstrap) {
    const std::vector<double> a = {1, 2, 3, 4, 5};
    const std::vector<double> b = {2, 3, 4};
    const interval one = bootstrap_two_sample(a, b, ratio, 1000, 42);
    const interval two = percentile_interval(two_level_replicates({a}, {b}, ratio, 1000, 42));
    EXPECT_EQ(one.lo, two.lo);
    EXPECT_EQ(one.hi, two.hi);
    // The published reference values of stats_bootstrap.fixed_seed_is_reproducible_and_exact.
    EXPECT_DOUBLE_EQ(two.lo, 1.0 / 3.0);
    EXPECT_DOUBLE_EQ(two.hi, 2.0);
}

TEST(stats_hierarchical, launches_are_drawn_before_iterations) {
    // Two launches of constant times 1 and 3: a replicate draws launches (1,1), (1,3), (3,1)
    // or (3,3), so its pooled median is 1, 2 or 3 with probabilities 1/4, 1/2, 1/4.
    const launch_samples a = {{1, 1, 1}, {3, 3, 3}};
    const std::vector<double> reps = two_level_median_replicates(a, 4000, 7);
    const std::set<double> values(reps.begin(), reps.end());
    EXPECT_EQ(values, (std::set<double>{1, 2, 3}));
    const double middle = static_cast<double>(std::count(reps.begin(), reps.end(), 2.0));
    EXPECT_NEAR(middle / 4000, 0.5, 0.03);
    const interval ci = percentile_interval(reps);
    EXPECT_DOUBLE_EQ(ci.lo, 1.0);
    EXPECT_DOUBLE_EQ(ci.hi, 3.0);
}

TEST(stats_hierarchical, launch_noise_widens_the_interval) {
    // Launch offsets of +-5% around 1 with a small within-launch spread: the iteration-only
    // bootstrap (all launches pooled as one) is far narrower than the two-level one.
    const launch_samples a = grouped({0.95, 1.0, 1.05}, 50);
    launch_samples flat(1);
    for (const auto& l : a)
        flat[0].insert(flat[0].end(), l.begin(), l.end());
    const interval two = percentile_interval(two_level_median_replicates(a, 2000, 3));
    const interval one = percentile_interval(two_level_median_replicates(flat, 2000, 3));
    EXPECT_GT(two.hi - two.lo, 3 * (one.hi - one.lo));
    EXPECT_LE(two.lo, 0.96);
    EXPECT_GE(two.hi, 1.05);
}

TEST(stats_hierarchical, pooled_median_and_launch_steps) {
    EXPECT_DOUBLE_EQ(pooled_median({{1, 5}, {2}, {9, 3}}), 3.0);
    case_data x, empty, y;
    x.step_s = {1, 2};
    y.step_s = {3};
    const launch_samples s = launch_steps({&x, &empty, &y});
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[1], std::vector<double>{3});
}

TEST(stats_hierarchical, bootstrap_p_value_exact) {
    // below = 1, above = 3: 2 (1 + 1) / 5
    EXPECT_DOUBLE_EQ(bootstrap_p_value({0.5, 1.5, 2, 3}, 1.0), 0.8);
    // all nine above: 2 (0 + 1) / 10, the smallest p nine replicates can give
    EXPECT_DOUBLE_EQ(bootstrap_p_value(std::vector<double>(9, 1.1), 1.0), 0.2);
    EXPECT_DOUBLE_EQ(bootstrap_p_value({1, 1}, 1.0), 1.0); // capped
}

TEST(stats_hierarchical, replicates_for_holm) {
    EXPECT_EQ(replicates_for(2000, 4, 0.05), 2000u);  // 20 * 4 / 0.05 - 1 = 1599
    EXPECT_EQ(replicates_for(2000, 10, 0.05), 3999u); // 2 * 10 / 4000 = 0.005 = alpha / 10
    EXPECT_EQ(replicates_for(100, 1, 0.5), 100u);
    EXPECT_EQ(replicates_for(2000, 1000, 0.05), 20000u);  // capped
    EXPECT_EQ(replicates_for(50000, 1000, 0.05), 50000u); // as asked
}

TEST(stats_hierarchical, three_launches_per_side_detect_a_real_shift) {
    // Launch noise +-2%, real shift 10%: every replicate ratio exceeds 1.
    const launch_samples base = grouped({0.98, 1.0, 1.02}, 20);
    const launch_samples next = grouped({1.08, 1.10, 1.12}, 20);
    const auto reps = two_level_replicates(next, base, ratio, 2000, 11);
    EXPECT_DOUBLE_EQ(bootstrap_p_value(reps, 1.0), 2.0 / 2001);
    const interval ci = percentile_interval(reps);
    EXPECT_GT(ci.lo, 1.04);
    EXPECT_LT(ci.hi, 1.17);
}

TEST(welch_log_median, matches_the_t_distribution_with_four_degrees_of_freedom) {
    // Log launch medians {0, .1, .2} against {.3, .4, .5}: equal variances and sizes, so
    // df = 4 and t = 0.3 / sqrt(0.02 / 3); p from integrating t4's density numerically.
    const launch_samples a = {{std::exp(0.0), 5.0, 0.1}, {std::exp(0.1)}, {std::exp(0.2)}};
    const launch_samples b = {{std::exp(0.3)}, {std::exp(0.4)}, {std::exp(0.5)}};
    EXPECT_NEAR(welch_log_median_p(a, b), 0.0213116, 1e-5);
    EXPECT_NEAR(welch_log_median_p(b, a), 0.0213116, 1e-5);
}

TEST(welch_log_median, one_launch_or_no_spread) {
    const launch_samples one = {{1.0, 2.0, 3.0}};
    const launch_samples two = {{1.0}, {1.0}};
    EXPECT_EQ(welch_log_median_p(one, two), 1.0);
    EXPECT_EQ(welch_log_median_p(two, two), 1.0);
    EXPECT_EQ(welch_log_median_p(two, launch_samples{{2.0}, {2.0}}), 0.0);
}

TEST(welch_log_median, detectable_change_from_t_quantiles) {
    // Log medians {0, .1, .2} and {.3, .4, .5}: SD 0.1 each, SE = sqrt(0.02 / 3), df = 4;
    // t(0.975, 4) = 2.7764451 and t(0.9, 4) = 1.5332063 from the t table.
    const launch_samples a = {{std::exp(0.0)}, {std::exp(0.1)}, {std::exp(0.2)}};
    const launch_samples b = {{std::exp(0.3)}, {std::exp(0.4)}, {std::exp(0.5)}};
    EXPECT_NEAR(launch_log_sd(a), 0.1, 1e-12);
    const double se = std::sqrt(0.02 / 3);
    EXPECT_NEAR(detectable_change(a, b, 0.05, 0.9), std::expm1((2.7764451 + 1.5332063) * se), 1e-6);
    EXPECT_TRUE(std::isnan(detectable_change(a, launch_samples{{1.0}}, 0.05, 0.9)));
    EXPECT_TRUE(std::isnan(launch_log_sd(launch_samples{{1.0, 2.0}})));
    const launch_samples flat = {{1.0}, {1.0}, {1.0}};
    EXPECT_EQ(detectable_change(flat, flat, 0.05, 0.9), 0.0);
}

TEST(welch_log_median, launches_needed_agrees_with_detectable_change) {
    // Launch noise SD 0.1 on both sides; a 10% slowdown. The normal approximation,
    // 2 sd^2 (z(0.975) + z(0.9))^2 / ln(1.1)^2 = 23.1, is a lower bound (t has wider tails).
    const auto side = [](std::size_t n) {
        // n log medians of mean 0 and SD 0.1: +-d alternating, plus one 0 when n is odd.
        const double even = static_cast<double>(n - n % 2);
        const double d = 0.1 * std::sqrt(static_cast<double>(n - 1) / even);
        launch_samples s;
        for (std::size_t i = 0; i < n; ++i)
            s.push_back({std::exp(i + 1 == n && n % 2 ? 0.0 : (i % 2 ? d : -d))});
        return s;
    };
    const std::size_t n = launches_needed(side(4), side(4), 0.10, 0.05, 0.9);
    EXPECT_GE(n, 24u);
    EXPECT_LE(n, 26u);
    // With n launches per side the detectable change is at most 10%; with fewer, above it.
    EXPECT_NEAR(launch_log_sd(side(n)), 0.1, 1e-12);
    EXPECT_LE(detectable_change(side(n), side(n), 0.05, 0.9), 0.10);
    EXPECT_GT(detectable_change(side(n - 2), side(n - 2), 0.05, 0.9), 0.10);
    EXPECT_EQ(launches_needed(side(4), side(4), 0.10, 0.05, 0.9, 10), 11u); // capped
    EXPECT_EQ(launches_needed(side(4), launch_samples{{1.0}}, 0.10, 0.05, 0.9), 0u);
}
