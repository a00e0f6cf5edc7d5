#include "kernels/reference/attention_ref.hpp"

#include "kernels/random.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::reference;

namespace {

std::vector<std::int64_t> iota_pos(std::int64_t n, std::int64_t first = 0) {
    std::vector<std::int64_t> p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), first);
    return p;
}

attention_shape tiny_shape() {
    attention_shape s;
    s.batch = 1;
    s.heads = 2;
    s.kv_heads = 1;
    s.q_len = 3;
    s.k_len = 4;
    s.head_dim = 4;
    s.causal = true;
    return s;
}

} // namespace

TEST(attention_ref, rejects_bad_shapes) {
    attention_shape s = tiny_shape();
    s.heads = 3;
    s.kv_heads = 2;
    EXPECT_THROW(check_attention_shape(s), ringscale::config_error);
    s = tiny_shape();
    s.head_dim = 0;
    EXPECT_THROW(check_attention_shape(s), ringscale::config_error);
    EXPECT_FLOAT_EQ(attention_scale(tiny_shape()), 0.5f);
}

// Equal scores (q = 0): O is the mean of the visible V rows and LSE = log(visible count).
TEST(attention_ref, zero_query_averages_visible_values) {
    attention_shape s = tiny_shape();
    std::vector<float> q(attention_q_elems(s), 0.0f), k(attention_kv_elems(s)), v(k.size());
    fill_uniform(k.data(), k.size(), 7, 0);
    std::iota(v.begin(), v.end(), 0.0f); // v[j][d] = 4 j + d
    const std::vector<std::int64_t> q_pos{0, 2, 10}, k_pos = iota_pos(4);
    std::vector<float> o(q.size()), lse(s.heads * s.q_len);
    attention_fwd_ref(s, q.data(), k.data(), v.data(), q_pos.data(), k_pos.data(), o.data(),
                      lse.data());
    const int visible[3] = {1, 3, 4};
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 3; ++i) {
            const float mean_j = (visible[i] - 1) / 2.0f;
            EXPECT_FLOAT_EQ(lse[h * 3 + i], std::log(static_cast<float>(visible[i])));
            for (int d = 0; d < 4; ++d)
                EXPECT_FLOAT_EQ(o[(h * 3 + i) * 4 + d], 4.0f * mean_j + d);
        }
}

TEST(attention_ref, fully_masked_rows_are_zero_with_minus_infinite_lse) {
    attention_shape s = tiny_shape();
    std::vector<float> q(attention_q_elems(s)), k(attention_kv_elems(s)), v(k.size());
    fill_uniform(q.data(), q.size(), 1, 0);
    fill_uniform(k.data(), k.size(), 2, 0);
    fill_uniform(v.data(), v.size(), 3, 0);
    const std::vector<std::int64_t> q_pos{0, 1, 2}, k_pos = iota_pos(4, 2); // row 0, 1: none
    std::vector<float> o(q.size(), 9.0f), lse(s.heads * s.q_len);
    attention_fwd_ref(s, q.data(), k.data(), v.data(), q_pos.data(), k_pos.data(), o.data(),
                      lse.data());
    for (int h = 0; h < 2; ++h) {
        EXPECT_EQ(lse[h * 3 + 0], -INFINITY);
        EXPECT_EQ(lse[h * 3 + 1], -INFINITY);
        EXPECT_TRUE(std::isfinite(lse[h * 3 + 2]));
        for (int d = 0; d < 4; ++d)
            EXPECT_EQ(o[(h * 3 + 0) * 4 + d], 0.0f);
    }
    std::vector<float> d_o(q.size(), 1.0f), dq(q.size(), 5.0f), dk(k.size()), dv(k.size());
    attention_bwd_ref(s, q.data(), k.data(), v.data(), d_o.data(), q_pos.data(), k_pos.data(),
                      dq.data(), dk.data(), dv.data());
    for (float x : dq)
        EXPECT_FALSE(std::isnan(x));
    EXPECT_EQ(dq[0], 0.0f);
}

// GQA: two query heads sharing one kv head equal the same heads with the kv head copied.
TEST(attention_ref, grouped_query_heads_share_kv_heads) {
    attention_shape s = tiny_shape();
    s.heads = 4;
    s.kv_heads = 2;
    s.causal = false;
    std::vector<float> q(attention_q_elems(s)), k(attention_kv_elems(s)), v(k.size());
    fill_uniform(q.data(), q.size(), 4, 0);
    fill_uniform(k.data(), k.size(), 5, 0);
    fill_uniform(v.data(), v.size(), 6, 0);
    attention_shape full = s;
    full.kv_heads = 4;
    const std::int64_t head = s.k_len * s.head_dim;
    std::vector<float> k4, v4;
    for (int h = 0; h < 4; ++h) {
        k4.insert(k4.end(), k.begin() + (h / 2) * head, k.begin() + (h / 2 + 1) * head);
        v4.insert(v4.end(), v.begin() + (h / 2) * head, v.begin() + (h / 2 + 1) * head);
    }
    const auto qp = iota_pos(3), kp = iota_pos(4);
    std::vector<float> o(q.size()), o4(q.size()), lse(12), lse4(12);
    attention_fwd_ref(s, q.data(), k.data(), v.data(), qp.data(), kp.data(), o.data(), lse.data());
    attention_fwd_ref(full, q.data(), k4.data(), v4.data(), qp.data(), kp.data(), o4.data(),
                      lse4.data());
    EXPECT_EQ(o, o4);
    EXPECT_EQ(lse, lse4);
}

// Backward vs central finite differences of L = sum(O * dO) on a tiny causal GQA case.
// Step h = 1e-2 on fp32 inputs: truncation error O(h^2) ~ 1e-4, fp32 rounding of L
// (|L| ~ 1, eps 6e-8) divided by 2h ~ 1e-5; so 1e-3 absolute detects any wrong term
// (gradients here are O(0.1..1)).
TEST(attention_ref, backward_matches_finite_differences) {
    const attention_shape s = tiny_shape();
    std::vector<float> q(attention_q_elems(s)), k(attention_kv_elems(s)), v(k.size());
    std::vector<float> d_o(q.size());
    fill_uniform(q.data(), q.size(), 11, 0, 2.0f);
    fill_uniform(k.data(), k.size(), 12, 0, 2.0f);
    fill_uniform(v.data(), v.size(), 13, 0);
    fill_uniform(d_o.data(), d_o.size(), 14, 0);
    const std::vector<std::int64_t> q_pos{1, 2, 3}, k_pos = iota_pos(4);
    std::vector<float> dq(q.size()), dk(k.size()), dv(k.size());
    attention_bwd_ref(s, q.data(), k.data(), v.data(), d_o.data(), q_pos.data(), k_pos.data(),
                      dq.data(), dk.data(), dv.data());
    auto loss = [&]() {
        std::vector<float> o(q.size()), lse(s.heads * s.q_len);
        attention_fwd_ref(s, q.data(), k.data(), v.data(), q_pos.data(), k_pos.data(), o.data(),
                          lse.data());
        double l = 0.0;
        for (std::size_t i = 0; i < o.size(); ++i)
            l += static_cast<double>(o[i]) * d_o[i];
        return l;
    };
    const float h = 1e-2f;
    auto check = [&](std::vector<float>& x, const std::vector<float>& grad, const char* name) {
        for (std::size_t i = 0; i < x.size(); ++i) {
            const float saved = x[i];
            x[i] = saved + h;
            const double up = loss();
            x[i] = saved - h;
            const double down = loss();
            x[i] = saved;
            EXPECT_NEAR(grad[i], (up - down) / (2.0 * h), 1e-3) << name << "[" << i << "]";
        }
    };
    check(q, dq, "dq");
    check(k, dk, "dk");
    check(v, dv, "dv");
    // The key at position 3 is visible only to query position 3: its gradient is not zero,
    // while nothing is masked wrongly into dK of invisible pairs (checked by the FD above).
    EXPECT_NE(dv[3 * 4], 0.0f);
}
