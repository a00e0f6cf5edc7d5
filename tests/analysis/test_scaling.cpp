#include "analysis/comparisons/scaling.hpp"

#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale::analysis;

namespace {

/// A pooled case with one launch of constant iteration times.
struct fake {
    case_data data;
    pooled_case pooled;
    fake(int p, double t, const std::string& scaling) {
        data.job = "j";
        data.world_size = p;
        data.status = "ok";
        data.step_s.assign(10, t);
        pooled.world_size = p;
        pooled.scaling = scaling;
        pooled.launches = {&data};
    }
};

} // namespace

TEST(stats_scaling, karp_flatt_formula) {
    EXPECT_NEAR(karp_flatt(3.2, 4), (1 / 3.2 - 0.25) / 0.75, 1e-15);
    EXPECT_NEAR(karp_flatt(4.0, 4), 0.0, 1e-15);
    EXPECT_TRUE(std::isnan(karp_flatt(1.0, 1)));
}

TEST(stats_scaling, strong_scaling_against_smallest_p) {
    // T = 8 (0.1 + 0.9 / p): serial fraction 0.1 exactly.
    fake a(1, 8.0, "strong"), b(2, 4.4, "strong"), c(4, 2.6, "strong");
    family fam{"f", "strong", {}, {&a.pooled, &b.pooled, &c.pooled}};
    const auto r = analyse_scaling(fam, {});
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->base_p, 1);
    EXPECT_DOUBLE_EQ(r->base_time, 8.0);
    ASSERT_EQ(r->points.size(), 3u);
    EXPECT_DOUBLE_EQ(r->points[1].speedup, 8.0 / 4.4);
    EXPECT_DOUBLE_EQ(r->points[2].efficiency, 8.0 / (4 * 2.6));
    EXPECT_NEAR(r->points[1].karp_flatt, 0.1, 1e-12);
    EXPECT_NEAR(r->points[2].karp_flatt, 0.1, 1e-12);
    EXPECT_NEAR(r->serial_fraction, 0.1, 1e-12);
    // constant samples: the bootstrap CI collapses onto the estimate
    EXPECT_DOUBLE_EQ(r->points[2].efficiency_lo, r->points[2].efficiency);
    EXPECT_DOUBLE_EQ(r->points[2].efficiency_hi, r->points[2].efficiency);
    EXPECT_EQ(r->points[2].resampled, "iterations");
}

TEST(stats_scaling, explicit_base_and_weak_scaling) {
    fake a(2, 1.0, "weak"), b(4, 1.25, "weak"), c(8, 2.0, "weak");
    family fam{"f", "weak", {"seq_len"}, {&a.pooled, &b.pooled, &c.pooled}};
    scaling_options opt;
    opt.base_p = 4;
    const auto r = analyse_scaling(fam, opt);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->base_p, 4);
    EXPECT_DOUBLE_EQ(r->points[2].efficiency, 1.25 / 2.0);    // weak: T0 / Tp
    EXPECT_DOUBLE_EQ(r->points[2].speedup, 2.0 * 1.25 / 2.0); // scaled: (p/p0) E
    EXPECT_TRUE(std::isnan(r->points[2].karp_flatt));
    opt.base_p = 16;
    EXPECT_FALSE(analyse_scaling(fam, opt).has_value());
}

TEST(stats_scaling, bootstrap_ci_brackets_estimate_with_noise) {
    fake a(1, 8.0, "strong"), b(2, 4.4, "strong");
    a.data.step_s = {7.8, 8.0, 8.3, 7.9, 8.1, 8.2, 7.7, 8.0, 8.4, 7.95};
    b.data.step_s = {4.3, 4.4, 4.6, 4.35, 4.5, 4.45, 4.2, 4.4, 4.55, 4.38};
    family fam{"f", "strong", {}, {&a.pooled, &b.pooled}};
    const auto r = analyse_scaling(fam, {});
    const auto& pt = r->points[1];
    EXPECT_LT(pt.speedup_lo, pt.speedup);
    EXPECT_GT(pt.speedup_hi, pt.speedup);
    EXPECT_NEAR(pt.efficiency_lo, pt.speedup_lo / 2, 1e-12); // same replicates, strong
}

TEST(stats_scaling, launches_are_resampled_when_both_cases_have_two) {
    // Two launches per P, constant within a launch: the iteration bootstrap sees no noise at
    // all; the two-level bootstrap sees the launches differ.
    fake a(1, 8.0, "strong"), b(2, 4.0, "strong");
    case_data a2 = a.data, b2 = b.data;
    a2.step_s.assign(10, 8.8);
    b2.step_s.assign(10, 4.4);
    a.pooled.launches.push_back(&a2);
    b.pooled.launches.push_back(&b2);
    family fam{"f", "strong", {}, {&a.pooled, &b.pooled}};
    const auto r = analyse_scaling(fam, {});
    const auto& pt = r->points[1];
    EXPECT_EQ(pt.resampled, "launches");
    EXPECT_EQ(pt.launches, 2u);
    // Replicate speedups are 8/4.4, 8/4, 8.4/4.2, 8.8/4.4, ... : the interval spans launch noise.
    EXPECT_DOUBLE_EQ(pt.speedup_lo, 8.0 / 4.4);
    EXPECT_DOUBLE_EQ(pt.speedup_hi, 8.8 / 4.0);
    EXPECT_DOUBLE_EQ(pt.time_lo, 4.0);
    EXPECT_DOUBLE_EQ(pt.time_hi, 4.4);
    // Demanding three launches falls back to iterations (pooled as one launch).
    scaling_options three;
    three.min_launches = 3;
    EXPECT_EQ(analyse_scaling(fam, three)->points[1].resampled, "iterations");
}

TEST(stats_scaling, karp_flatt_outside_zero_one_is_flagged) {
    EXPECT_EQ(karp_flatt_note(0.0), "");
    EXPECT_EQ(karp_flatt_note(0.3), "");
    EXPECT_EQ(karp_flatt_note(std::nan("")), "");
    EXPECT_NE(karp_flatt_note(-0.2).find("superlinear"), std::string::npos);
    EXPECT_NE(karp_flatt_note(61853).find("not a serial fraction"), std::string::npos);
}

TEST(stats_scaling, collectives_get_no_strong_scaling_arithmetic) {
    pooled_case a, b;
    a.job = b.job = "collectives";
    a.world_size = 1;
    b.world_size = 2;
    family f{"collectives/broadcast bytes=16777216", "strong", {}, {&a, &b}};
    EXPECT_NE(scaling_refusal(f).find("busbw"), std::string::npos);
    a.job = b.job = "ring_attention";
    family g{"ring_attention/ring", "strong", {}, {&a, &b}};
    EXPECT_EQ(scaling_refusal(g), "");
}
