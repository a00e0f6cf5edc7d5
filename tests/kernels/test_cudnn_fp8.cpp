// fp8 attention's host arithmetic (kernels/cudnn_fp8.hpp), no GPU: the current per-tensor
// scales and their descales, the degenerate amaxes, no stored value beyond E4M3's range (O
// included, at V's scale), and a host emulation of cuDNN's fp8 forward as its graph defines it
// (Q, K, V read as E4M3 · descale, scores in fp32, P rounded to E4M3 at scale_s, O rounded to
// E4M3 at scale_o) within the stated tolerance of the fp64 reference on the same inputs, and
// not within it with one key too many per row (so the bound is not vacuous).
#include "kernels/cudnn_fp8.hpp"
#include "kernels/elem.hpp"
#include "kernels/reference/attention_ref.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace ringscale::kernels;

TEST(cudnn_fp8, current_scales_map_each_amax_to_448) {
    const cudnn_fp8_scales s = cudnn_fp8_current_scales(2.0f, 0.5f, 7.0f);
    EXPECT_FLOAT_EQ(s.scale_q, 224.0f);
    EXPECT_FLOAT_EQ(s.scale_k, 896.0f);
    EXPECT_FLOAT_EQ(s.scale_v, 64.0f);
    EXPECT_FLOAT_EQ(s.descale_q * s.scale_q, 1.0f);
    EXPECT_FLOAT_EQ(s.descale_k * s.scale_k, 1.0f);
    EXPECT_FLOAT_EQ(s.descale_v * s.scale_v, 1.0f);
    EXPECT_FLOAT_EQ(s.scale_s, 448.0f);
    EXPECT_FLOAT_EQ(s.descale_s, 1.0f / 448.0f);
    EXPECT_FLOAT_EQ(s.scale_o, s.scale_v);
    EXPECT_FLOAT_EQ(s.descale_o, s.descale_v);
}

TEST(cudnn_fp8, the_descales_a_shape_carries_give_back_the_same_scalars) {
    const cudnn_fp8_scales a = cudnn_fp8_current_scales(2.0f, 0.5f, 7.0f);
    const cudnn_fp8_scales b = cudnn_fp8_from_descales(a.descale_q, a.descale_k, a.descale_v);
    EXPECT_FLOAT_EQ(b.scale_q, a.scale_q);
    EXPECT_FLOAT_EQ(b.scale_k, a.scale_k);
    EXPECT_FLOAT_EQ(b.scale_v, a.scale_v);
    EXPECT_EQ(b.descale_v, a.descale_v);
    EXPECT_EQ(b.scale_s, a.scale_s);
    EXPECT_EQ(b.descale_s, a.descale_s);
    EXPECT_FLOAT_EQ(b.scale_o, a.scale_o);
    EXPECT_EQ(b.descale_o, a.descale_o);
}

TEST(cudnn_fp8, a_degenerate_amax_keeps_the_scale_1) {
    const float inf = std::numeric_limits<float>::infinity();
    for (const float amax : {0.0f, -1.0f, inf, std::nanf("")}) {
        EXPECT_EQ(cudnn_fp8_scale(amax), 1.0f) << amax;
        EXPECT_EQ(cudnn_fp8_current_scales(amax, 1, 1).descale_q, 1.0f) << amax;
    }
    EXPECT_FLOAT_EQ(cudnn_fp8_scale(448.0f), 1.0f);
    EXPECT_FLOAT_EQ(cudnn_fp8_o_tolerance(2.0), 0.5);
}

namespace {

constexpr std::int64_t n = 48, dim = 64;

std::vector<float> seeded(std::size_t count, unsigned seed, float amp) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(-amp, amp);
    std::vector<float> x(count);
    for (float& v : x)
        v = u(g);
    return x;
}

float amax_of(const std::vector<float>& x) {
    float m = 0;
    for (float v : x)
        m = std::max(m, std::fabs(v));
    return m;
}

// x as the GPU reads it: E4M3 of s·x times 1/s; every stored value within E4M3's range.
std::vector<float> as_read(const std::vector<float>& x, float scale, float descale) {
    std::vector<float> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_LE(std::fabs(x[i] * scale), fp8_max(fp8_format::e4m3) * (1 + 1e-6f));
        out[i] = round_to_fp8(fp8_format::e4m3, x[i] * scale) * descale;
    }
    return out;
}

// cuDNN's fp8 forward as its graph defines it, one head, causal (row i sees keys up to
// i + `extra`: 0 is right), on inputs as read. Returns O as read back (E4M3 · descale_o).
std::vector<float> emulate(const std::vector<float>& q, const std::vector<float>& k,
                           const std::vector<float>& v, const cudnn_fp8_scales& s, int extra) {
    const float softmax = 1 / std::sqrt(static_cast<float>(dim));
    std::vector<float> o(q.size());
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t last = std::min(i + extra, n - 1);
        std::vector<float> score(static_cast<std::size_t>(last + 1));
        float m = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = 0; j <= last; ++j) {
            float dot = 0;
            for (std::int64_t d = 0; d < dim; ++d)
                dot += q[i * dim + d] * k[j * dim + d];
            score[j] = dot * softmax;
            m = std::max(m, score[j]);
        }
        float sum = 0;
        for (float& x : score)
            sum += (x = std::exp(x - m));
        for (std::int64_t d = 0; d < dim; ++d) {
            float acc = 0;
            for (std::int64_t j = 0; j <= last; ++j)
                acc += round_to_fp8(fp8_format::e4m3, score[j] / sum * s.scale_s) * s.descale_s *
                       v[j * dim + d];
            const float stored = acc * s.scale_o;
            EXPECT_LE(std::fabs(stored), fp8_max(fp8_format::e4m3) * (1 + 1e-5f)) << "O overflows";
            o[i * dim + d] = round_to_fp8(fp8_format::e4m3, stored) * s.descale_o;
        }
    }
    return o;
}

double max_error(const std::vector<float>& a, const std::vector<float>& b) {
    double e = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        e = std::max(e, std::fabs(static_cast<double>(a[i]) - b[i]));
    return e;
}

} // namespace

TEST(cudnn_fp8, the_emulated_forward_is_within_the_stated_tolerance) {
    const auto qx = seeded(n * dim, 1, 2.0f), kx = seeded(n * dim, 2, 2.0f);
    const auto vx = seeded(n * dim, 3, 1.0f);
    const cudnn_fp8_scales s = cudnn_fp8_current_scales(amax_of(qx), amax_of(kx), amax_of(vx));
    const auto q = as_read(qx, s.scale_q, s.descale_q), k = as_read(kx, s.scale_k, s.descale_k);
    const auto v = as_read(vx, s.scale_v, s.descale_v);
    attention_shape shape;
    shape.q_len = shape.k_len = n;
    shape.head_dim = dim;
    shape.causal = true;
    std::vector<std::int64_t> pos(n);
    for (std::int64_t i = 0; i < n; ++i)
        pos[i] = i;
    std::vector<float> want(q.size()), lse(n);
    reference::attention_fwd_ref(shape, q.data(), k.data(), v.data(), pos.data(), pos.data(),
                                 want.data(), lse.data());
    const double bound = cudnn_fp8_o_tolerance(amax_of(v));
    const double err = max_error(emulate(q, k, v, s, 0), want);
    EXPECT_LE(err, bound);
    // fp8's rounding reaches at least an eighth of the bound (it is not loose by orders), and
    // one key too many per row (a misplaced band) breaks it.
    EXPECT_GT(err, bound / 8);
    EXPECT_GT(max_error(emulate(q, k, v, s, 1), want), bound);
}
