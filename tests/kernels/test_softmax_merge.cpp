#include "kernels/softmax_merge.hpp"

#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::reference;

namespace {
constexpr float k_inf = std::numeric_limits<float>::infinity();
}

TEST(softmax_merge, lse_combine_values_and_infinities) {
    EXPECT_FLOAT_EQ(lse_combine(0.0f, 0.0f), std::log(2.0f));
    EXPECT_FLOAT_EQ(lse_combine(1.0f, 3.0f), 3.0f + std::log1p(std::exp(-2.0f)));
    EXPECT_FLOAT_EQ(lse_combine(3.0f, 1.0f), lse_combine(1.0f, 3.0f));
    EXPECT_FLOAT_EQ(lse_combine(100.0f, 100.0f), 100.0f + std::log(2.0f)); // no overflow
    EXPECT_EQ(lse_combine(-k_inf, 2.5f), 2.5f);
    EXPECT_EQ(lse_combine(2.5f, -k_inf), 2.5f);
    EXPECT_EQ(lse_combine(-k_inf, -k_inf), -k_inf);
}

TEST(softmax_merge, fully_masked_sides) {
    const float a[3] = {1.0f, -2.0f, 0.5f};
    const float b[3] = {7.0f, 8.0f, 9.0f};
    float out[3];
    float lse = 0.0f;
    softmax_merge_row(a, 1.5f, b, -k_inf, 3, out, &lse); // b fully masked
    EXPECT_EQ(lse, 1.5f);
    for (int d = 0; d < 3; ++d)
        EXPECT_EQ(out[d], a[d]);
    softmax_merge_row(b, -k_inf, a, 1.5f, 3, out, &lse); // a fully masked
    for (int d = 0; d < 3; ++d)
        EXPECT_EQ(out[d], a[d]);
    softmax_merge_row(a, -k_inf, b, -k_inf, 3, out, &lse); // both: zeros, no NaN
    EXPECT_EQ(lse, -k_inf);
    for (int d = 0; d < 3; ++d)
        EXPECT_EQ(out[d], 0.0f);
}

TEST(softmax_merge, equal_weights_average_and_aliasing) {
    float a[2] = {1.0f, 3.0f};
    const float b[2] = {3.0f, 5.0f};
    float lse = 0.25f;
    softmax_merge_row(a, lse, b, 0.25f, 2, a, &lse); // out aliases a
    EXPECT_FLOAT_EQ(a[0], 2.0f);
    EXPECT_FLOAT_EQ(a[1], 4.0f);
    EXPECT_FLOAT_EQ(lse, 0.25f + std::log(2.0f));
}

// Attention over keys [0, split) merged with attention over [split, n) equals attention
// over all keys, row by row, including causal rows that see only one side or none.
TEST(softmax_merge, split_key_set_equals_full_attention) {
    attention_shape s;
    s.batch = 1;
    s.heads = 2;
    s.kv_heads = 1;
    s.q_len = 6;
    s.k_len = 10;
    s.head_dim = 8;
    s.causal = true;
    const std::int64_t split = 4, D = s.head_dim;
    std::vector<float> q(attention_q_elems(s)), k(attention_kv_elems(s)), v(k.size());
    fill_uniform(q.data(), q.size(), 1, 0, 2.0f);
    fill_uniform(k.data(), k.size(), 2, 0, 2.0f);
    fill_uniform(v.data(), v.size(), 3, 0);
    // q_pos -1 sees no key at all; 2 sees only the first part; 12 sees both.
    const std::vector<std::int64_t> q_pos{-1, 2, 3, 5, 8, 12};
    std::vector<std::int64_t> k_pos(s.k_len);
    std::iota(k_pos.begin(), k_pos.end(), 0);

    std::vector<float> o_full(q.size()), lse_full(s.heads * s.q_len);
    attention_fwd_ref(s, q.data(), k.data(), v.data(), q_pos.data(), k_pos.data(), o_full.data(),
                      lse_full.data());

    std::vector<float> acc(q.size(), 123.0f), lse_acc(lse_full.size(), 5.0f);
    softmax_merge_init(acc.data(), lse_acc.data(), s.heads * s.q_len, D);
    std::vector<float> o_part(q.size()), lse_part(lse_full.size());
    for (const auto& [first, count] : {std::pair<std::int64_t, std::int64_t>{0, split},
                                       std::pair<std::int64_t, std::int64_t>{split, 10 - split}}) {
        // Split the single kv head into a contiguous key slice.
        attention_shape part = s;
        part.k_len = count;
        const float* kp = k.data() + first * D;
        const float* vp = v.data() + first * D;
        attention_fwd_ref(part, q.data(), kp, vp, q_pos.data(), k_pos.data() + first, o_part.data(),
                          lse_part.data());
        softmax_merge_into(acc.data(), lse_acc.data(), o_part.data(), lse_part.data(),
                           s.heads * s.q_len, D);
    }
    for (std::size_t r = 0; r < lse_full.size(); ++r) {
        if (std::isinf(lse_full[r]))
            EXPECT_EQ(lse_acc[r], lse_full[r]) << "row " << r;
        else
            EXPECT_NEAR(lse_acc[r], lse_full[r], 1e-5f) << "row " << r;
    }
    // fp32: each merge is a convex combination of O rows (|O| <= 1); 1e-6 absolute covers
    // the two roundings of exp and the weighted sum with a wide margin.
    for (std::size_t i = 0; i < acc.size(); ++i) {
        ASSERT_FALSE(std::isnan(acc[i]));
        EXPECT_NEAR(acc[i], o_full[i], 1e-6f) << "element " << i;
    }
    EXPECT_EQ(lse_acc[0], -k_inf); // the row that sees nothing stays fully masked
}
