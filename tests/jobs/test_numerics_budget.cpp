// The dtypes' budgets against fp64 (jobs/numerics_budget.hpp) against hand-computed values: the
// unit roundoff of each dtype, the widest reduction, the depth, the step's growth, the loss's
// constant and the fp32 case without one.
#include "jobs/numerics_budget.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace ringscale;
using kernels::model::train_dtype;

namespace {

kernels::model::model_config ci_model() {
    kernels::model::model_config m;
    m.layers = 1;
    m.hidden = 64;
    m.heads = 1;
    m.ffn = 16384;
    m.vocab = 32;
    return m;
}

} // namespace

TEST(numerics_budget, terms_of_the_ci_model_by_hand) {
    const jobs::fp64_budget b = jobs::fp64_budget_of(ci_model(), train_dtype::bf16, 64);
    ASSERT_TRUE(b.active());
    EXPECT_EQ(b.u, 0x1p-8);
    EXPECT_EQ(b.products, 7);     // 6 x 1 block + the logits
    EXPECT_EQ(b.widest_k, 16384); // the FFN, wider than hidden, vocab and the 64 tokens
    EXPECT_EQ(b.tokens, 64);
    // r(1) = (2 x 2^-8 + 16384 x 2^-24) sqrt(7) = (2^-7 + 2^-10) sqrt(7)
    const double r1 = (0x1p-7 + 0x1p-10) * std::sqrt(7.0);
    EXPECT_DOUBLE_EQ(b.relative(1), r1);
    EXPECT_DOUBLE_EQ(b.relative(16), 4 * r1); // sqrt(s)
    // loss: r(1) |loss(1)| / sqrt(64) / 16 at every step; grad_norm: r(s) x the fp64 norm.
    EXPECT_DOUBLE_EQ(b.loss(3.5), r1 * 3.5 / 8 / 16);
    EXPECT_DOUBLE_EQ(b.loss(-3.5), b.loss(3.5));
    EXPECT_DOUBLE_EQ(b.grad_norm(4, 0.5), 2 * r1 * 0.5);
    EXPECT_NE(b.describe().find("u = 2^-8, K = 16384, G = 7"), std::string::npos) << b.describe();
}

TEST(numerics_budget, each_dtype_its_unit_roundoff_and_fp32_none) {
    const auto m = ci_model();
    EXPECT_EQ(jobs::fp64_budget_of(m, train_dtype::fp16, 64).u, 0x1p-8); // held to bf16's
    EXPECT_EQ(jobs::fp64_budget_of(m, train_dtype::fp8, 64).u, 0x1p-3);  // E5M2
    EXPECT_FALSE(jobs::fp64_budget_of(m, train_dtype::fp32, 64).active());
    // fp8's budget is 2^5 times bf16's rounding term (the accumulation term is shared).
    const double bf16 = jobs::fp64_budget_of(m, train_dtype::bf16, 64).relative(1);
    const double fp8 = jobs::fp64_budget_of(m, train_dtype::fp8, 64).relative(1);
    EXPECT_DOUBLE_EQ(fp8 - bf16, (0x1p-2 - 0x1p-7) * std::sqrt(7.0));
}

TEST(numerics_budget, the_widest_reduction_and_the_depth) {
    auto m = ci_model();
    // A batch of 2^20 tokens: the weight gradients' sum over them is the widest reduction.
    EXPECT_EQ(jobs::fp64_budget_of(m, train_dtype::bf16, 1 << 20).widest_k, 1 << 20);
    m.ffn = 0; // 4 x hidden = 256, below a vocab of 1000
    m.vocab = 1000;
    m.layers = 4;
    const jobs::fp64_budget b = jobs::fp64_budget_of(m, train_dtype::bf16, 64);
    EXPECT_EQ(b.widest_k, 1000);
    EXPECT_EQ(b.products, 25);
    EXPECT_DOUBLE_EQ(b.relative(1), (0x1p-7 + 1000 * 0x1p-24) * 5);
}
