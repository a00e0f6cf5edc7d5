// linear: fast forward/backward against the plain reference, backward against central finite
// differences in double, and the accumulate-vs-overwrite contract of each gradient.
#include "kernels/cpu/layout_bhsd.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/random.hpp"
#include "kernels/reference/linear_ref.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;
using namespace ringscale::kernels::reference;

namespace {

std::vector<float> seeded(std::size_t n, std::uint64_t seed) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0);
    return v;
}

std::vector<double> to_double(const std::vector<float>& v) {
    return {v.begin(), v.end()};
}

// The definition, in double: L = Σ r[t,o]·(Σ_i x[t,i]·W[o,i] + b[o]); dL/dy = r.
double loss_ref(const linear_shape& s, const std::vector<double>& x, const std::vector<double>& w,
                const std::vector<double>& b, const std::vector<double>& r) {
    double loss = 0.0;
    for (std::size_t t = 0; t < s.tokens; ++t)
        for (std::size_t o = 0; o < s.out; ++o) {
            double y = b[o];
            for (std::size_t i = 0; i < s.in; ++i)
                y += x[t * s.in + i] * w[o * s.in + i];
            loss += r[t * s.out + o] * y;
        }
    return loss;
}

// Central difference dL/dv[k] in double; the loss is evaluated with v[k] ± h.
template <class Loss>
double central_diff(Loss loss, std::vector<double>& v, std::size_t k, double h = 1e-6) {
    const double saved = v[k];
    v[k] = saved + h;
    const double up = loss();
    v[k] = saved - h;
    const double down = loss();
    v[k] = saved;
    return (up - down) / (2.0 * h);
}

// fp32 analytic gradient vs double finite difference: inputs are O(1), so the analytic
// float result carries ~1e-7 relative rounding and the difference ~1e-9 truncation error.
constexpr double fd_tol = 1e-5;

} // namespace

TEST(linear, fast_forward_matches_reference_with_and_without_bias) {
    const linear_shape s{67, 96, 80};
    const auto x = seeded(s.tokens * s.in, 1), w = seeded(s.out * s.in, 2), b = seeded(s.out, 3);
    std::vector<float> y(s.tokens * s.out), y_ref(y.size());
    for (const float* bias : {b.data(), static_cast<const float*>(nullptr)}) {
        linear_fwd(s, x.data(), w.data(), bias, y.data());
        linear_fwd_ref(s, x.data(), w.data(), bias, y_ref.data());
        // K = 96 products of values in [-1, 1): fp32 sums stay within 1e-5 of the double sum.
        for (std::size_t k = 0; k < y.size(); ++k)
            ASSERT_NEAR(y[k], y_ref[k], 1e-5) << "element " << k;
    }
}

TEST(linear, backward_matches_central_differences) {
    const linear_shape s{3, 4, 5};
    const auto xf = seeded(s.tokens * s.in, 11), wf = seeded(s.out * s.in, 12);
    const auto bf = seeded(s.out, 13), rf = seeded(s.tokens * s.out, 14);
    std::vector<float> dx(xf.size()), dw(wf.size(), 0.0f), db(bf.size(), 0.0f);
    linear_bwd(s, xf.data(), wf.data(), rf.data(), dx.data(), dw.data(), db.data());

    auto x = to_double(xf), w = to_double(wf), b = to_double(bf);
    const auto r = to_double(rf);
    auto loss = [&] { return loss_ref(s, x, w, b, r); };
    for (std::size_t k = 0; k < x.size(); ++k)
        EXPECT_NEAR(dx[k], central_diff(loss, x, k), fd_tol) << "dx " << k;
    for (std::size_t k = 0; k < w.size(); ++k)
        EXPECT_NEAR(dw[k], central_diff(loss, w, k), fd_tol) << "dw " << k;
    for (std::size_t k = 0; k < b.size(); ++k)
        EXPECT_NEAR(db[k], central_diff(loss, b, k), fd_tol) << "db " << k;
}

TEST(linear, fast_backward_matches_reference) {
    const linear_shape s{130, 48, 72};
    const auto x = seeded(s.tokens * s.in, 21), w = seeded(s.out * s.in, 22);
    const auto dy = seeded(s.tokens * s.out, 23), w0 = seeded(s.out * s.in, 24);
    const auto b0 = seeded(s.out, 25);
    std::vector<float> dx(x.size()), dx_ref(x.size()), dw = w0, dw_ref = w0, db = b0, db_ref = b0;
    linear_bwd(s, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data());
    linear_bwd_ref(s, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), db_ref.data());
    // dx sums 72 products; dw and db sum 130 tokens: fp32 error well under 2e-5 at these sizes.
    for (std::size_t k = 0; k < dx.size(); ++k)
        ASSERT_NEAR(dx[k], dx_ref[k], 2e-5) << "dx " << k;
    for (std::size_t k = 0; k < dw.size(); ++k)
        ASSERT_NEAR(dw[k], dw_ref[k], 2e-5) << "dw " << k;
    for (std::size_t k = 0; k < db.size(); ++k)
        ASSERT_NEAR(db[k], db_ref[k], 2e-5) << "db " << k;
}

TEST(linear, weight_gradients_accumulate_and_input_gradient_overwrites) {
    const linear_shape s{9, 6, 7};
    const auto x = seeded(s.tokens * s.in, 31), w = seeded(s.out * s.in, 32);
    const auto dy = seeded(s.tokens * s.out, 33);
    // One pass from zero gives the gradient g.
    std::vector<float> dx(x.size()), g_w(w.size(), 0.0f), g_b(s.out, 0.0f);
    linear_bwd(s, x.data(), w.data(), dy.data(), dx.data(), g_w.data(), g_b.data());
    // Two passes from a nonzero start c give c + 2g; dx starts as NaN and must be overwritten.
    const auto c_w = seeded(w.size(), 34), c_b = seeded(s.out, 35);
    std::vector<float> dx2(x.size(), std::numeric_limits<float>::quiet_NaN()), dw = c_w, db = c_b;
    for (int pass = 0; pass < 2; ++pass)
        linear_bwd(s, x.data(), w.data(), dy.data(), dx2.data(), dw.data(), db.data());
    for (std::size_t k = 0; k < dx.size(); ++k)
        EXPECT_EQ(dx2[k], dx[k]) << "dx " << k;
    for (std::size_t k = 0; k < dw.size(); ++k)
        EXPECT_NEAR(dw[k], c_w[k] + 2.0f * g_w[k], 1e-5) << "dw " << k;
    for (std::size_t k = 0; k < db.size(); ++k)
        EXPECT_NEAR(db[k], c_b[k] + 2.0f * g_b[k], 1e-5) << "db " << k;
    // The reference follows the same contract.
    std::vector<float> dx_ref(x.size(), std::numeric_limits<float>::quiet_NaN()), dw_ref = c_w;
    for (int pass = 0; pass < 2; ++pass)
        linear_bwd_ref(s, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);
    for (std::size_t k = 0; k < dw.size(); ++k)
        EXPECT_NEAR(dw_ref[k], dw[k], 1e-5) << "dw_ref " << k;
    for (std::size_t k = 0; k < dx.size(); ++k)
        EXPECT_NEAR(dx_ref[k], dx[k], 1e-5) << "dx_ref " << k;
}

TEST(linear, null_dx_and_db_are_skipped) {
    const linear_shape s{4, 3, 2};
    const auto x = seeded(12, 41), w = seeded(6, 42), dy = seeded(8, 43);
    std::vector<float> dw(6, 0.0f), dw_full(6, 0.0f), dx(12), db(2, 0.0f);
    linear_bwd(s, x.data(), w.data(), dy.data(), nullptr, dw.data(), nullptr);
    linear_bwd(s, x.data(), w.data(), dy.data(), dx.data(), dw_full.data(), db.data());
    for (std::size_t k = 0; k < dw.size(); ++k)
        EXPECT_EQ(dw[k], dw_full[k]);
}

TEST(linear, zero_dimensions_are_config_errors) {
    std::vector<float> buf(16, 0.0f);
    for (const linear_shape s :
         {linear_shape{0, 2, 2}, linear_shape{2, 0, 2}, linear_shape{2, 2, 0}}) {
        EXPECT_THROW(linear_fwd(s, buf.data(), buf.data(), nullptr, buf.data()),
                     ringscale::config_error);
        EXPECT_THROW(linear_fwd_ref(s, buf.data(), buf.data(), nullptr, buf.data()),
                     ringscale::config_error);
    }
}

// linear_fwd_heads writes what linear_fwd then copy_bhsd write, bit for bit: heads of 64
// columns (the own GEMM's stores, where it runs) and of 32 (y through the scratch), a bias,
// three groups as Q, K and V, rows split over threads as linear_fwd splits them.
TEST(linear, forward_as_heads_is_the_layer_then_the_bhsd_copy_bit_for_bit) {
    for (const std::size_t d : {64u, 32u}) {
        SCOPED_TRACE("d " + std::to_string(d));
        const std::size_t seq = 10, seqs = 7, heads = 2, groups = 3;
        const linear_shape s{seq * seqs, 48, groups * heads * d};
        const auto x = seeded(s.tokens * s.in, 1), w = seeded(s.out * s.in, 2);
        const auto b = seeded(s.out, 3);
        std::vector<float> y(s.tokens * s.out), want(y.size()), got(y.size(), -1.0f),
            scratch(y.size());
        linear_fwd(s, x.data(), w.data(), b.data(), y.data());
        const std::size_t group = heads * d * s.tokens;
        for (std::size_t g = 0; g < groups; ++g)
            copy_bhsd(true, {static_cast<std::int64_t>(seqs), static_cast<std::int64_t>(seq)},
                      static_cast<std::int64_t>(heads), static_cast<std::int64_t>(d), y.data(),
                      static_cast<std::int64_t>(s.out), static_cast<std::int64_t>(g * heads * d),
                      want.data() + g * group);
        float* const dst[3] = {got.data(), got.data() + group, got.data() + 2 * group};
        linear_fwd_heads(s, x.data(), w.data(), b.data(), seq, heads, d, dst, scratch.data());
        EXPECT_EQ(got, want);
    }
    float* none[1] = {nullptr};
    const auto x = seeded(12 * 4, 1), w = seeded(64 * 4, 2);
    EXPECT_THROW(
        linear_fwd_heads({12, 4, 64}, x.data(), w.data(), nullptr, 5, 1, 64, none, nullptr),
        ringscale::config_error); // 12 tokens are not whole sequences of 5
}

// linear_bwd_heads: dx as linear_bwd then copy_bhsd put it, dW and db as linear_bwd accumulates
// them, bit for bit; heads of 64 (the own GEMM's stores) and of 32 (dx through the scratch).
TEST(linear, backward_with_dx_as_heads_is_the_layer_then_the_bhsd_copy_bit_for_bit) {
    for (const std::size_t d : {64u, 32u}) {
        SCOPED_TRACE("d " + std::to_string(d));
        const std::size_t seq = 10, seqs = 7, heads = 2;
        const linear_shape s{seq * seqs, heads * d, 72};
        const auto x = seeded(s.tokens * s.in, 1), w = seeded(s.out * s.in, 2);
        const auto dy = seeded(s.tokens * s.out, 3);
        std::vector<float> dx(s.tokens * s.in), want(dx.size()), got(dx.size(), -1.0f);
        std::vector<float> scratch(dx.size()), dw(s.out * s.in, 0.25f), dw2 = dw;
        std::vector<float> db(s.out, 0.5f), db2 = db;
        linear_bwd(s, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data());
        copy_bhsd(true, {static_cast<std::int64_t>(seqs), static_cast<std::int64_t>(seq)},
                  static_cast<std::int64_t>(heads), static_cast<std::int64_t>(d), dx.data(),
                  static_cast<std::int64_t>(s.in), 0, want.data());
        linear_bwd_heads(s, x.data(), w.data(), dy.data(), seq, heads, d, got.data(), dw2.data(),
                         db2.data(), scratch.data());
        EXPECT_EQ(got, want);
        EXPECT_EQ(dw2, dw);
        EXPECT_EQ(db2, db);
    }
    const auto x = seeded(12 * 64, 1), w = seeded(4 * 64, 2), dy = seeded(12 * 4, 3);
    std::vector<float> dx(12 * 64), dw(4 * 64);
    EXPECT_THROW(linear_bwd_heads({12, 64, 4}, x.data(), w.data(), dy.data(), 12, 2, 64, dx.data(),
                                  dw.data(), nullptr, nullptr),
                 ringscale::config_error); // in = 64 is not 2 heads of 64
    EXPECT_THROW(linear_bwd_heads({12, 64, 4}, x.data(), w.data(), dy.data(), 12, 1, 64, nullptr,
                                  dw.data(), nullptr, dx.data()),
                 ringscale::config_error); // dx null
}
