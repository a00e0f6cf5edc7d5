// The dtypes' budgets against fp64 (jobs/numerics_budget.hpp) against hand-computed values: the
// unit roundoff of each dtype, the depth, the fp32 case without one, and the step-1 gradient's
// worst tensor relative error on a hand-made gradient.
#include "jobs/numerics_budget.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace ringscale;
using kernels::model::train_dtype;

namespace {

kernels::model::model_config ci_model() {
    kernels::model::model_config m;
    m.layers = 1;
    m.hidden = 64;
    m.heads = 1;
    m.ffn = 256;
    m.vocab = 32;
    return m;
}

} // namespace

TEST(numerics_budget, terms_of_one_block_by_hand) {
    const jobs::fp64_budget b = jobs::fp64_budget_of(ci_model(), train_dtype::bf16);
    ASSERT_TRUE(b.active());
    EXPECT_EQ(b.u, 0x1p-8);
    EXPECT_EQ(b.products, 15); // 2 x (6 x 1 block + the logits) + the weight gradient
    EXPECT_DOUBLE_EQ(b.grad_rel(), 0x1p-8 * std::sqrt(15 / std::log(2.0)));
    EXPECT_NEAR(b.grad_rel(), 0.01817, 1e-5); // 4.65 u
    EXPECT_NE(b.describe().find("u = 2^-8, G = 2 (6L + 1) + 1 = 15"), std::string::npos)
        << b.describe();
}

TEST(numerics_budget, each_dtype_its_unit_roundoff_and_fp32_none) {
    const auto m = ci_model();
    EXPECT_EQ(jobs::fp64_budget_of(m, train_dtype::fp16).u, 0x1p-11);
    EXPECT_EQ(jobs::fp64_budget_of(m, train_dtype::fp8).u, 0x1p-3); // E5M2
    EXPECT_FALSE(jobs::fp64_budget_of(m, train_dtype::fp32).active());
    EXPECT_DOUBLE_EQ(jobs::fp64_budget_of(m, train_dtype::fp8).grad_rel(),
                     32 * jobs::fp64_budget_of(m, train_dtype::bf16).grad_rel());
}

TEST(numerics_budget, the_delayed_fp8_recipe_has_none_and_says_why) {
    kernels::model::precision_config p;
    p.dtype = train_dtype::fp8;
    p.scaling = kernels::model::fp8_scaling::delayed;
    const jobs::fp64_budget delayed = jobs::fp64_budget_of(ci_model(), p);
    EXPECT_FALSE(delayed.active());
    EXPECT_NE(delayed.describe().find("scale 1"), std::string::npos) << delayed.describe();
    p.scaling = kernels::model::fp8_scaling::current;
    EXPECT_DOUBLE_EQ(jobs::fp64_budget_of(ci_model(), p).grad_rel(),
                     jobs::fp64_budget_of(ci_model(), train_dtype::fp8).grad_rel());
    p.dtype = train_dtype::bf16;
    p.scaling = kernels::model::fp8_scaling::delayed; // no bearing outside fp8
    EXPECT_TRUE(jobs::fp64_budget_of(ci_model(), p).active());
    EXPECT_EQ(jobs::fp64_budget_of(ci_model(), train_dtype::fp32).describe(), "none");
}

TEST(numerics_budget, the_depth) {
    auto m = ci_model();
    m.layers = 4;
    EXPECT_EQ(jobs::fp64_budget_of(m, train_dtype::bf16).products, 51);
}

TEST(numerics_budget, the_worst_tensor_relative_error) {
    const auto m = ci_model();
    const kernels::model::param_layout layout(m);
    std::vector<double> g64(layout.total(), 1.0);
    std::vector<float> g(g64.begin(), g64.end());
    EXPECT_EQ(jobs::grad_rel_err(m, g.data(), g64.data()), 0.0);
    // The block's output bias (64 values) off by 0.1 each: 0.1 relative in that tensor alone,
    // however small its share of the whole gradient.
    const std::size_t bo = layout.unit(1).offset + layout.block().bo;
    for (std::size_t i = 0; i < 64; ++i)
        g[bo + i] = 1.1f;
    EXPECT_NEAR(jobs::grad_rel_err(m, g.data(), g64.data()), 0.1, 1e-6);
    // A tensor whose fp64 gradient is 0 is skipped; a NaN is infinite.
    for (std::size_t i = 0; i < 64; ++i)
        g64[bo + i] = 0;
    EXPECT_EQ(jobs::grad_rel_err(m, g.data(), g64.data()), 0.0);
    g[0] = NAN;
    EXPECT_EQ(jobs::grad_rel_err(m, g.data(), g64.data()), INFINITY);
}
