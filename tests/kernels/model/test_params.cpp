// The model's flat parameter layout (kernels/model/params.hpp): units and tensors tile the
// buffer, sizes worked out by hand (grouped-query attention and SwiGLU included), configurations
// that cannot work are refused, and each target is the next token.
#include "tests/kernels/model/model_rig.hpp"

#include "src/base/error.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;
using namespace ringscale::test_model;

TEST(model_params, flat_layout_is_contiguous_and_sized) {
    model_config c = tiny();
    c.hidden = 128;
    c.heads = 2;
    const param_layout l(c);
    ASSERT_EQ(l.units(), c.layers + 2);
    const std::size_t h = 128;
    EXPECT_EQ(l.block().size, 12 * h * h + 8 * h);
    EXPECT_EQ(l.unit(0).size, 16 * h);
    EXPECT_EQ(l.head().size, h + 16 * h + 16);
    std::size_t at = 0;
    for (int u = 0; u < l.units(); ++u) {
        EXPECT_EQ(l.unit(u).offset, at);
        at += l.unit(u).size;
    }
    EXPECT_EQ(at, l.total());
    EXPECT_EQ(l.max_unit(), l.block().size);
    const auto t = tensors_of(c, l);
    std::size_t sum = 0;
    for (const auto& x : t)
        sum += x.size;
    EXPECT_EQ(sum, l.total()); // the tensors tile the buffer
}

TEST(model_params, gqa_and_swiglu_layout_by_hand) {
    const model_config c = tiny_gqa_swiglu();
    const param_layout l(c);
    // norm1 128 + wqkv (128 + 2 x 64) x 128 + wo 128 x 128 + bo 128 + norm2 128
    // + w1 (2 x 96) x 128 + b1 192 + w2 128 x 96 + b2 128.
    EXPECT_EQ(l.block().size,
              128u + 256 * 128 + 128 * 128 + 128 + 128 + 192 * 128 + 192 + 128 * 96 + 128);
    EXPECT_EQ(l.block().wqkv, 128u);
    EXPECT_EQ(l.block().w2 - l.block().w1, 192u * 128 + 192);
    std::size_t sum = 0;
    for (const auto& x : tensors_of(c, l))
        sum += x.size;
    EXPECT_EQ(sum, l.total());
    EXPECT_EQ(c.kv_width(), 64);
    EXPECT_EQ(c.qkv_width(), 256);
    EXPECT_EQ(c.ffn_up(), 192);
}

TEST(model_params, bad_configs_are_refused) {
    {
        model_config c = tiny_gqa_swiglu();
        c.kv_heads = 3; // 2 query heads
        EXPECT_THROW(model_check(c), config_error);
        c.kv_heads = -1;
        EXPECT_THROW(model_check(c), config_error);
        c = tiny_gqa_swiglu();
        c.ffn = -4;
        EXPECT_THROW(model_check(c), config_error);
        EXPECT_NO_THROW(model_check(tiny_gqa_swiglu()));
        EXPECT_EQ(parse_mlp("swiglu"), mlp_kind::swiglu);
        EXPECT_THROW(parse_mlp("relu\x1b[2J"), config_error);
    }
    model_config c = tiny();
    c.heads = 3; // 64 / 3
    EXPECT_THROW(model_check(c), config_error);
    c = tiny();
    c.heads = 2; // head_dim 32
    EXPECT_THROW(model_check(c), config_error);
    c = tiny();
    c.layers = 0;
    EXPECT_THROW(model_check(c), config_error);
    EXPECT_NO_THROW(model_check(tiny()));
}

TEST(model_params, targets_are_the_next_token) {
    for (std::int64_t n = 0; n < 4; ++n)
        for (std::int64_t p = 0; p < 10; ++p) {
            EXPECT_EQ(target_at(1, 50, n, p), token_at(1, 50, n, p + 1));
            EXPECT_GE(token_at(1, 50, n, p), 0);
            EXPECT_LT(token_at(1, 50, n, p), 50);
        }
}
