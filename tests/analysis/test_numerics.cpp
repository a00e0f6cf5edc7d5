// ringscale-stats numerics' rule (analysis/comparisons/numerics.hpp) on synthetic series with
// exact values: the same training; a divergence past k x the floor at its step, naming the
// quantity that moved first; a non-finite loss as a divergence; the floor's running max and its
// ulp floor; MAE, RMSE, max; the mean's 95% t interval over seeds.
#include "analysis/comparisons/numerics.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace ringscale::analysis;

namespace {

// Four steps: the run equal to the reference, floors 1e-3 (loss, grad norm) and 1e-4 (params).
numerics_data same() {
    numerics_data d;
    d["ref_loss"] = d["loss"] = {3, 2, 1, 0.5};
    d["ref_grad_norm"] = d["grad_norm"] = {1, 1, 1, 1};
    d["param_abs_err"] = d["param_rel_err"] = {0, 0, 0, 0};
    d["floor_loss"] = d["floor_grad_norm"] = {1e-3, 1e-3, 1e-3, 1e-3};
    d["floor_param_abs"] = {1e-4, 1e-4, 1e-4, 1e-4};
    return d;
}

} // namespace

TEST(numerics, within_k_times_the_floor_is_the_same_training) {
    numerics_data d = same();
    d["loss"][1] += 1.9e-3; // 1.9 x the floor: within k = 2
    d["param_abs_err"] = {1.2e-4, 1.2e-4, 1.2e-4, 1.2e-4};
    d["param_rel_err"] = {1e-3, 1e-3, 1e-3, 1e-3};
    const numerics_verdict v = judge_numerics(d, 2.0);
    EXPECT_EQ(v.step, 0);
    EXPECT_EQ(v.text(), "the same training");
    EXPECT_EQ(judge_numerics(d, 1.5).text(), "diverges at step 2 (loss)");
}

TEST(numerics, the_first_quantity_past_its_floor_is_named) {
    numerics_data d = same();
    d["grad_norm"][2] = 1.1;     // step 3's gradient norm
    d["param_abs_err"][2] = 1.0; // and the parameters after it
    d["param_rel_err"][2] = 0.1;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 3 (grad_norm)");
    d["grad_norm"][2] = 1;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 3 (params)");
}

TEST(numerics, the_floor_is_its_running_max_and_at_least_16_ulps) {
    numerics_data d = same();
    d["floor_loss"] = {1e-2, 0, 0, 0}; // step 1's floor carries over
    d["loss"][3] += 1.5e-2;
    EXPECT_EQ(judge_numerics(d, 2.0).step, 0);
    d = same();
    d["floor_loss"] = {0, 0, 0, 0};
    d["loss"][0] += 3 * 16 * 0x1p-24; // the ulp floor of 3 itself: within 2 x it
    EXPECT_EQ(judge_numerics(d, 2.0).step, 0);
    d["loss"][0] += 3 * 32 * 0x1p-24;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 1 (loss)");
}

TEST(numerics, a_non_finite_loss_is_a_divergence) {
    numerics_data d = same();
    d["loss"][1] = NAN;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 2 (loss, non-finite)");
    d = same();
    d.erase("floor_loss");
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "no verdict (series missing)");
}

TEST(numerics, loss_divergence_summary_and_interval_over_seeds) {
    const divergence_summary s = summarize({1, 2, 3, 4}, {1, 1, 1, 1});
    EXPECT_DOUBLE_EQ(s.mae, 1.5);             // (0 + 1 + 2 + 3) / 4
    EXPECT_DOUBLE_EQ(s.rmse, std::sqrt(3.5)); // (0 + 1 + 4 + 9) / 4
    EXPECT_DOUBLE_EQ(s.max, 3);
    EXPECT_TRUE(std::isinf(summarize({NAN}, {1}).max));
    const mean_ci m = mean_with_ci({1, 2, 3}); // sd 1, se 1/sqrt(3), t(2) = 4.303
    EXPECT_DOUBLE_EQ(m.mean, 2);
    EXPECT_NEAR(m.lo, 2 - 4.303 / std::sqrt(3.0), 1e-12);
    EXPECT_NEAR(m.hi, 2 + 4.303 / std::sqrt(3.0), 1e-12);
    const mean_ci one = mean_with_ci({5});
    EXPECT_EQ(one.lo, 5);
}
