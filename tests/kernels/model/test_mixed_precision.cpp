// kernels/model/mixed_precision: what each training dtype rounds a GEMM operand or an attention
// input to, against exact values: bf16 and fp16 rounding, fp16's loss scale and overflow count,
// fp8's per-tensor scales (current from the tensor, delayed from the amax history reduced over
// ranks), and fp32 untouched.
#include "kernels/model/mixed_precision.hpp"

#include "kernels/elem.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::model;

namespace {

precision_config with(train_dtype t) {
    precision_config c;
    c.dtype = t;
    return c;
}

} // namespace

TEST(mixed_precision, fp32_is_untouched) {
    mixed_precision m;
    m.configure(with(train_dtype::fp32), 1);
    const std::vector<float> x = {1.0f + 0x1p-20f};
    EXPECT_EQ(m.gemm_input(0, gemm_operand::x, x.data(), 1), x.data());
    EXPECT_FALSE(m.active());
}

TEST(mixed_precision, bf16_and_fp16_round_every_operand) {
    mixed_precision m;
    m.configure(with(train_dtype::bf16), 1);
    const std::vector<float> x = {1.0f + 0x1p-9f, 1.0f + 3 * 0x1p-9f};
    const float* r = m.gemm_input(0, gemm_operand::w, x.data(), 2);
    EXPECT_EQ(r[0], 1.0f);           // a tie: even
    EXPECT_EQ(r[1], 1.0f + 0x1p-7f); // 1.5 ulps -> 2
    std::vector<float> a = {1.0f + 0x1p-12f};
    m.configure(with(train_dtype::fp16), 1);
    m.round_attention(a.data(), 1);
    EXPECT_EQ(a[0], 1.0f); // fp16's ulp at 1 is 2^-10
    EXPECT_EQ(parse_train_dtype("auto"), train_dtype::fp32);
    EXPECT_STREQ(train_dtype_name(parse_train_dtype("fp8")), "fp8");
}

TEST(mixed_precision, fp16_scales_gradients_and_counts_overflows) {
    precision_config c = with(train_dtype::fp16);
    c.loss_scale = 1024;
    mixed_precision m;
    m.configure(c, 1);
    // 2^-30 underflows fp16 (smallest subnormal 2^-24) unscaled; scaled by 2^10 it is 2^-20.
    const std::vector<float> dy = {0x1p-30f, 100.0f};
    const float* r = m.gemm_input(0, gemm_operand::dy, dy.data(), 2);
    EXPECT_EQ(r[0], 0x1p-30f);
    EXPECT_TRUE(std::isinf(r[1])); // 102400 > 65504: overflow
    EXPECT_EQ(m.overflows(), 1u);
    const float* x = m.gemm_input(0, gemm_operand::x, dy.data(), 1); // activations: no scale
    EXPECT_EQ(x[0], 0.0f);
}

TEST(mixed_precision, fp8_current_scaling_uses_the_tensor_amax) {
    precision_config c = with(train_dtype::fp8);
    c.scaling = fp8_scaling::current;
    mixed_precision m;
    m.configure(c, 1);
    const std::vector<float> x = {1.0f, -3.0f};
    const float* r = m.gemm_input(4, gemm_operand::x, x.data(), 2); // the logits' GEMM
    const float s = 448.0f / 3.0f;
    EXPECT_EQ(r[0], 144.0f / s); // 149.3 -> 144 in E4M3 (ulp 16 in [128, 256))
    EXPECT_EQ(r[1], -3.0f);      // the amax maps to 448 exactly
    const std::vector<float> g = {1.0f, 0.3f};
    const float* rg = m.gemm_input(0, gemm_operand::dy, g.data(), 2);
    EXPECT_EQ(rg[1], round_to_fp8(fp8_format::e5m2, 0.3f * 57344.0f) / 57344.0f);
}

TEST(mixed_precision, fp8_current_scaling_takes_the_amax_over_the_shards) {
    precision_config c = with(train_dtype::fp8);
    c.scaling = fp8_scaling::current;
    mixed_precision m;
    m.set_amax_reduce([](float amax) { return std::max(amax, 6.0f); }); // another shard saw 6
    m.configure(c, 1);                                                  // keeps the reduction
    const std::vector<float> x = {3.1f, 1.0f};
    const float* r = m.gemm_input(0, gemm_operand::x, x.data(), 2);
    const float shared = 448.0f / 6.0f, own = 448.0f / 3.1f; // the tensor's scale, not the shard's
    EXPECT_EQ(r[0], round_to_fp8(fp8_format::e4m3, 3.1f * shared) / shared); // 231.5 -> 224
    EXPECT_NE(r[0], round_to_fp8(fp8_format::e4m3, 3.1f * own) / own);
    c.scaling = fp8_scaling::delayed; // the delayed recipe reduces at the step's end instead
    m.configure(c, 1);
    EXPECT_EQ(m.gemm_input(0, gemm_operand::x, x.data(), 2)[0],
              round_to_fp8(fp8_format::e4m3, 3.1f)); // scale 1: no amax history yet
}

TEST(mixed_precision, fp8_delayed_scaling_uses_the_reduced_history) {
    mixed_precision m;
    m.configure(with(train_dtype::fp8), 1);
    EXPECT_EQ(m.delayed_scale(0, gemm_operand::x), 1.0f); // no history: scale 1
    const std::vector<float> x = {3.0f, 0.1f};
    const float* r = m.gemm_input(0, gemm_operand::x, x.data(), 2);
    EXPECT_EQ(r[1], round_to_fp8(fp8_format::e4m3, 0.1f)); // scale 1
    // Another rank saw 6: the step's amaxes are reduced to the max before joining the history.
    m.end_step([](float* amax, std::size_t n) {
        ASSERT_EQ(n, 15u); // (4 * 1 + 1) sites x 3 operands
        amax[0] = std::max(amax[0], 6.0f);
    });
    EXPECT_EQ(m.delayed_scale(0, gemm_operand::x), 448.0f / 6.0f);
    EXPECT_EQ(m.delayed_scale(0, gemm_operand::w), 1.0f);
    EXPECT_THROW(m.gemm_input(5, gemm_operand::x, x.data(), 2), std::logic_error);
}
