// The attention jobs' seeded inputs (kernels/attention_inputs.hpp): the uniform kind is the
// values every launch ran before (the same formula), the outliers kind changes only its
// channels and its sink, and the sink draws a large share of the softmax mass (fp64).
#include "kernels/attention_inputs.hpp"

#include "kernels/random.hpp"
#include "kernels/reference/attention_sampled.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;

namespace {

std::vector<float> row_of(const attention_inputs& in, attention_tensor t, std::int64_t b,
                          std::int64_t h, std::int64_t heads, std::int64_t pos) {
    std::vector<float> r(static_cast<std::size_t>(in.head_dim));
    attention_input_row(in, t, b, h, heads, pos, r.data());
    return r;
}

/// Mean softmax mass of key 0 over query rows `rows` of a causal head of S tokens.
double sink_mass(const attention_inputs& in, const std::vector<std::int64_t>& rows) {
    const std::int64_t s = in.seq_len, d = in.head_dim;
    std::vector<float> q, k(static_cast<std::size_t>(s * d)), v(k.size());
    for (std::int64_t p = 0; p < s; ++p) {
        attention_input_row(in, attention_tensor::k, 0, 0, 1, p, k.data() + p * d);
        attention_input_row(in, attention_tensor::v, 0, 0, 1, p, v.data() + p * d);
    }
    for (std::int64_t p : rows) {
        const auto r = row_of(in, attention_tensor::q, 0, 0, 1, p);
        q.insert(q.end(), r.begin(), r.end());
    }
    attention_shape shape;
    shape.q_len = static_cast<std::int64_t>(rows.size());
    shape.k_len = s;
    shape.head_dim = d;
    shape.causal = true;
    std::vector<std::int64_t> all(static_cast<std::size_t>(s));
    std::iota(all.begin(), all.end(), 0);
    const auto f = reference::attention_rows_fp64(shape, q.data(), k.data(), v.data(), nullptr,
                                                  rows.data(), all.data());
    double mass = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        double dot = 0;
        for (std::int64_t x = 0; x < d; ++x)
            dot += static_cast<double>(q[i * d + x]) * k[static_cast<std::size_t>(x)];
        mass += std::exp(dot * attention_scale(shape) - f.lse[i]);
    }
    return mass / static_cast<double>(rows.size());
}

} // namespace

TEST(attention_inputs, the_uniform_kind_is_the_values_launches_ran_before) {
    attention_inputs in;
    in.seed = 5;
    in.seq_len = 1000;
    in.head_dim = 64;
    for (attention_tensor t :
         {attention_tensor::q, attention_tensor::k, attention_tensor::v, attention_tensor::d_out}) {
        const auto id = static_cast<std::uint64_t>(t);
        const float scale = id < 2 ? 2.0f : 1.0f;
        const auto r = row_of(in, t, 1, 2, 3, 77);
        const std::uint64_t first = ((1 * 3 + 2) * 1000 + 77) * 64;
        for (std::size_t j = 0; j < 64; ++j)
            ASSERT_EQ(r[j], scale * uniform_at(mix64(5 * 8 + id), first + j)) << j;
    }
    EXPECT_EQ(parse_input_kind("outliers"), input_kind::outliers);
    EXPECT_STREQ(input_kind_name(input_kind::uniform), "uniform");
    EXPECT_THROW(parse_input_kind("gaussian"), config_error);
}

TEST(attention_inputs, outliers_change_their_channels_and_the_sink_only) {
    attention_inputs in;
    in.seed = 9;
    in.seq_len = 512;
    in.head_dim = 128;
    attention_inputs plain = in;
    in.kind = input_kind::outliers;
    const outlier_channels ch = outlier_channels_of(in);
    const std::set<std::int64_t> distinct{ch.q_k[0], ch.q_k[1], ch.v, ch.sink};
    ASSERT_EQ(distinct.size(), 4u);
    EXPECT_LT(*distinct.rbegin(), 128);
    EXPECT_GE(*distinct.begin(), 0);
    for (std::int64_t pos : {0, 1, 300}) {
        const auto q = row_of(in, attention_tensor::q, 0, 1, 2, pos);
        const auto q0 = row_of(plain, attention_tensor::q, 0, 1, 2, pos);
        const auto k = row_of(in, attention_tensor::k, 0, 1, 2, pos);
        const auto k0 = row_of(plain, attention_tensor::k, 0, 1, 2, pos);
        const auto v = row_of(in, attention_tensor::v, 0, 1, 2, pos);
        const auto v0 = row_of(plain, attention_tensor::v, 0, 1, 2, pos);
        for (std::int64_t j = 0; j < 128; ++j) {
            const auto u = static_cast<std::size_t>(j);
            const bool massive = j == ch.q_k[0] || j == ch.q_k[1];
            if (j == ch.sink) {
                EXPECT_TRUE(q[u] >= 1.0f && q[u] < 3.0f) << q[u];
                EXPECT_EQ(k[u], pos == 0 ? 48.0f : k0[u]);
            } else {
                EXPECT_EQ(q[u], massive ? 4.0f * q0[u] : q0[u]);
                EXPECT_EQ(k[u], massive ? 4.0f * k0[u] : k0[u]);
            }
            EXPECT_EQ(v[u], j == ch.v ? 8.0f * v0[u] : v0[u]);
        }
    }
}

TEST(attention_inputs, the_sink_draws_a_large_share_of_the_softmax_mass) {
    attention_inputs in;
    in.seed = 3;
    in.seq_len = 2048;
    in.head_dim = 64;
    const std::vector<std::int64_t> rows{200, 700, 1100, 1500, 1900, 2047};
    const double plain = sink_mass(in, rows);
    in.kind = input_kind::outliers;
    const double sink = sink_mass(in, rows);
    EXPECT_LT(plain, 0.01);
    EXPECT_GT(sink, 0.2);
}
