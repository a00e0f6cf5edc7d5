// fp8 attention's host arithmetic (kernels/cudnn_fp8.hpp), no GPU: the current per-tensor
// scales and their descales, the degenerate amaxes, no stored value beyond E4M3's range (O
// included, at V's scale), and a host emulation of cuDNN's fp8 forward as its graph defines it
// (Q, K, V read as E4M3 · descale, scores in fp32, P rounded to E4M3 at scale_s, O rounded to
// E4M3 at scale_o) within the stated tolerance of the fp64 reference on the same inputs, and
// not within it with one key too many per row (so the bound is not vacuous). The backward's
// scalars (dO's current scale, the outputs' from measured amaxes, cuDNN's order) and a host
// emulation of its fp8 backward: within the stated tolerance from its third run, not with
// scales 1 (its first run) nor with one key too many per row.
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

TEST(cudnn_fp8, backward_scales_follow_do_and_the_measured_amaxes) {
    const cudnn_fp8_scales f = cudnn_fp8_current_scales(2.0f, 0.5f, 7.0f);
    const cudnn_fp8_bwd_scales s = cudnn_fp8_backward_scales(f, 4.0f, {1.0f, 2.0f, 0.25f, 0});
    EXPECT_EQ(s.descale_o, f.descale_v);
    EXPECT_FLOAT_EQ(s.scale_do, 112.0f);
    EXPECT_FLOAT_EQ(s.descale_do * s.scale_do, 1.0f);
    EXPECT_FLOAT_EQ(s.scale_dq, 448.0f / 1.125f);
    EXPECT_FLOAT_EQ(s.scale_dk, 224.0f / 1.125f);
    EXPECT_FLOAT_EQ(s.scale_dv, 1792.0f / 1.125f);
    EXPECT_FLOAT_EQ(s.descale_dk * s.scale_dk, 1.0f);
    EXPECT_EQ(s.scale_dp, 1.0f); // not measured yet
    EXPECT_EQ(s.descale_dp, 1.0f);
    EXPECT_EQ(cudnn_fp8_output_scale(std::nanf("")), 1.0f);
    EXPECT_FLOAT_EQ(cudnn_fp8_grad_tolerance(2.0), 0.75);
    // The order cuDNN's graph takes them in (cudnn_sdpa_bwd_args::fp8_scalars).
    const auto a = cudnn_fp8_backward_scalars(s);
    const float want[] = {f.descale_q,  f.descale_k, f.descale_v,  s.descale_o,
                          s.descale_do, f.descale_s, s.descale_dp, f.scale_s,
                          s.scale_dq,   s.scale_dk,  s.scale_dv,   s.scale_dp};
    for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(a[i], want[i]) << i;
}

namespace {

constexpr std::int64_t bn = 40, bdim = 128; // cuDNN's fp8 backward on Hopper: D = 128

struct grads {
    std::vector<float> dq, dk, dv;
    cudnn_fp8_bwd_amax amax; // before quantisation
    float widest = 0;        // the largest |x · scale| stored (E4M3 saturates beyond 448)
};

float stored(float x, float scale, float descale, float& amax, float& widest) {
    amax = std::max(amax, std::fabs(x));
    widest = std::max(widest, std::fabs(x * scale));
    return round_to_fp8(fp8_format::e4m3, x * scale) * descale;
}

// cuDNN's fp8 backward as its graph defines it, one head, causal (+ `extra` keys per row),
// on inputs as read (o and d_o too), from the merged LSE: P recomputed in fp32; dV from P
// in E4M3 at scale_s; dS = P (dO V^T - rowsum(dO O)) in E4M3 at dP's scale; dQ, dK from it;
// each output in E4M3 at its scale.
grads emulate_bwd(const std::vector<float>& q, const std::vector<float>& k,
                  const std::vector<float>& v, const std::vector<float>& o,
                  const std::vector<float>& d_o, const std::vector<float>& lse,
                  const cudnn_fp8_bwd_scales& s, int extra) {
    const float scale = 1 / std::sqrt(static_cast<float>(bdim));
    const auto size = static_cast<std::size_t>(bn * bdim);
    std::vector<float> ds(static_cast<std::size_t>(bn * bn), 0), dv(size, 0), dq(size, 0),
        dk(size, 0);
    grads g;
    for (std::int64_t i = 0; i < bn; ++i) {
        float delta = 0;
        for (std::int64_t d = 0; d < bdim; ++d)
            delta += d_o[i * bdim + d] * o[i * bdim + d];
        for (std::int64_t j = 0; j <= std::min(i + extra, bn - 1); ++j) {
            float dot = 0, dp = 0;
            for (std::int64_t d = 0; d < bdim; ++d) {
                dot += q[i * bdim + d] * k[j * bdim + d];
                dp += d_o[i * bdim + d] * v[j * bdim + d];
            }
            const float p = std::exp(dot * scale - lse[i]);
            const float p8 = round_to_fp8(fp8_format::e4m3, p * s.fwd.scale_s) * s.fwd.descale_s;
            for (std::int64_t d = 0; d < bdim; ++d)
                dv[j * bdim + d] += p8 * d_o[i * bdim + d];
            ds[i * bn + j] =
                stored(p * (dp - delta), s.scale_dp, s.descale_dp, g.amax.dp, g.widest);
        }
    }
    for (std::int64_t i = 0; i < bn; ++i)
        for (std::int64_t j = 0; j < bn; ++j)
            for (std::int64_t d = 0; d < bdim; ++d) {
                dq[i * bdim + d] += scale * ds[i * bn + j] * k[j * bdim + d];
                dk[j * bdim + d] += scale * ds[i * bn + j] * q[i * bdim + d];
            }
    for (std::size_t x = 0; x < size; ++x) {
        g.dq.push_back(stored(dq[x], s.scale_dq, s.descale_dq, g.amax.dq, g.widest));
        g.dk.push_back(stored(dk[x], s.scale_dk, s.descale_dk, g.amax.dk, g.widest));
        g.dv.push_back(stored(dv[x], s.scale_dv, s.descale_dv, g.amax.dv, g.widest));
    }
    return g;
}

// max |a - b| relative to max |b|.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
    return max_error(a, b) / amax_of(b);
}

} // namespace

TEST(cudnn_fp8, the_emulated_backward_is_within_the_stated_tolerance_from_its_third_run) {
    const auto qx = seeded(bn * bdim, 4, 2.0f), kx = seeded(bn * bdim, 5, 2.0f);
    const auto vx = seeded(bn * bdim, 6, 1.0f), dox = seeded(bn * bdim, 7, 0.001f);
    const cudnn_fp8_scales f = cudnn_fp8_current_scales(amax_of(qx), amax_of(kx), amax_of(vx));
    const auto q = as_read(qx, f.scale_q, f.descale_q), k = as_read(kx, f.scale_k, f.descale_k);
    const auto v = as_read(vx, f.scale_v, f.descale_v);
    attention_shape shape;
    shape.q_len = shape.k_len = bn;
    shape.head_dim = bdim;
    shape.causal = true;
    std::vector<std::int64_t> pos(bn);
    for (std::int64_t i = 0; i < bn; ++i)
        pos[i] = i;
    std::vector<float> o(q.size()), lse(bn);
    reference::attention_fwd_ref(shape, q.data(), k.data(), v.data(), pos.data(), pos.data(),
                                 o.data(), lse.data());
    cudnn_fp8_bwd_scales s = cudnn_fp8_backward_scales(f, amax_of(dox), {});
    const auto o8 = as_read(o, f.scale_v, s.descale_o); // O stored again at V's scale
    const auto d_o = as_read(dox, s.scale_do, s.descale_do);
    std::vector<float> dq(q.size()), dk(q.size()), dv(q.size());
    reference::attention_bwd_ref(shape, q.data(), k.data(), v.data(), d_o.data(), pos.data(),
                                 pos.data(), dq.data(), dk.data(), dv.data());
    const double bound = cudnn_fp8_grad_tolerance(1.0);
    grads g = emulate_bwd(q, k, v, o8, d_o, lse, s, 0);
    // Scales 1 (the first run) lose the small gradients to E4M3's subnormals.
    EXPECT_GT(relative_error(g.dq, dq), bound);
    s = cudnn_fp8_backward_scales(f, amax_of(dox), g.amax);
    g = emulate_bwd(q, k, v, o8, d_o, lse, s, 0);
    s = cudnn_fp8_backward_scales(f, amax_of(dox), g.amax);
    g = emulate_bwd(q, k, v, o8, d_o, lse, s, 0);
    EXPECT_LE(g.widest, fp8_max(fp8_format::e4m3)) << "a stored value saturates";
    for (const auto& [got, want] : {std::pair{&g.dq, &dq}, {&g.dk, &dk}, {&g.dv, &dv}}) {
        const double err = relative_error(*got, *want);
        EXPECT_LE(err, bound);
        EXPECT_GT(err, bound / 16); // fp8's rounding shows: the bound is not loose by orders
    }
    // One key too many per row (a misplaced band) breaks it.
    const grads bad = emulate_bwd(q, k, v, o8, d_o, lse, s, 1);
    EXPECT_GT(relative_error(bad.dq, dq), bound);
}
