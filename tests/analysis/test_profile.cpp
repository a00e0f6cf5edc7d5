#include "analysis/measures/profile.hpp"

#include <gtest/gtest.h>

using namespace ringscale::analysis;

namespace {

attr_value num(double v) {
    attr_value a;
    a.text = std::to_string(v);
    a.number = v;
    return a;
}

attr_value txt(const std::string& s) {
    attr_value a;
    a.text = s;
    return a;
}

// Two timed steps of 1 s each: gemm 0.6 s/step (4 calls/step), gelu 0.3 s/step.
case_data profiled_case() {
    case_data c;
    c.job = "train_step";
    c.variant = "ddp";
    c.attrs["job"] = txt("train_step");
    c.attrs["variant"] = txt("ddp");
    c.attrs["profile_ops"] = txt("gemm,gelu");
    c.attrs["profile_steps"] = num(2);
    c.attrs["profile_step_s"] = num(2.0);
    c.attrs["profile_gemm_s"] = num(1.2);
    c.attrs["profile_gemm_calls"] = num(8);
    c.attrs["profile_gelu_s"] = num(0.6);
    c.attrs["profile_gelu_calls"] = num(2);
    return c;
}

} // namespace

TEST(analysis_profile, per_step_times_shares_and_the_rest_as_other) {
    const std::vector<profile_op> ops = profile_ops(profiled_case());
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops[0].name, "gemm");
    EXPECT_DOUBLE_EQ(ops[0].per_step_s, 0.6);
    EXPECT_DOUBLE_EQ(ops[0].share, 0.6);
    EXPECT_DOUBLE_EQ(ops[0].calls_per_step, 4);
    EXPECT_EQ(ops[1].name, "gelu");
    EXPECT_DOUBLE_EQ(ops[1].per_step_s, 0.3);
    EXPECT_DOUBLE_EQ(ops[1].calls_per_step, 1);
    EXPECT_EQ(ops[2].name, "other");
    EXPECT_NEAR(ops[2].per_step_s, 0.1, 1e-12);
    EXPECT_NEAR(ops[2].share, 0.1, 1e-12);
}

TEST(analysis_profile, other_never_negative) {
    case_data c = profiled_case();
    c.attrs["profile_step_s"] = num(1.0); // ops sum to more than the step (clock granularity)
    EXPECT_DOUBLE_EQ(profile_ops(c).back().per_step_s, 0.0);
}

TEST(analysis_profile, cases_without_a_profile_are_left_out) {
    case_data plain;
    plain.job = "train_step";
    EXPECT_TRUE(profile_ops(plain).empty());
    case_data no_steps = profiled_case();
    no_steps.attrs["profile_steps"] = num(0);
    EXPECT_TRUE(profile_ops(no_steps).empty());
    const table t = profile_table({plain, profiled_case()});
    ASSERT_EQ(t.rows.size(), 3u);
    EXPECT_EQ(t.rows[1][1].text, "gelu");
    EXPECT_EQ(t.rows[1][3].text, "30.0");
    EXPECT_EQ(t.keys[2], "time_per_step_s");
}
