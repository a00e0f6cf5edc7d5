// rmsnorm: forward against the double-precision definition on seeded inputs, backward against
// central finite differences in double, dγ accumulation, and bad shapes.
#include "kernels/cpu/rmsnorm.hpp"
#include "kernels/random.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;

namespace {

std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

std::vector<double> to_double(const std::vector<float>& v) {
    return {v.begin(), v.end()};
}

// The definition in double: y[r, j] = x[r, j] · γ[j] / sqrt(mean_j x² + eps).
std::vector<double> rmsnorm_def(std::size_t rows, std::size_t dim, double eps,
                                const std::vector<double>& x, const std::vector<double>& g) {
    std::vector<double> y(rows * dim);
    for (std::size_t r = 0; r < rows; ++r) {
        double ss = 0.0;
        for (std::size_t j = 0; j < dim; ++j)
            ss += x[r * dim + j] * x[r * dim + j];
        const double inv = 1.0 / std::sqrt(ss / dim + eps);
        for (std::size_t j = 0; j < dim; ++j)
            y[r * dim + j] = x[r * dim + j] * inv * g[j];
    }
    return y;
}

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

} // namespace

TEST(rmsnorm, forward_matches_double_definition) {
    const std::size_t rows = 33, dim = 64;
    const float eps = 1e-5f;
    const auto x = seeded(rows * dim, 1, 3.0f), g = seeded(dim, 2);
    std::vector<float> y(x.size()), inv(rows);
    rmsnorm_fwd(rows, dim, eps, x.data(), g.data(), y.data(), inv.data());
    const auto y_def = rmsnorm_def(rows, dim, eps, to_double(x), to_double(g));
    // |y| <= |γ|·sqrt(dim) = 8; fp32 rounding of x·inv·γ is a few ulps: 4e-6 absolute.
    for (std::size_t k = 0; k < y.size(); ++k)
        ASSERT_NEAR(y[k], y_def[k], 4e-6) << "element " << k;
    for (std::size_t r = 0; r < rows; ++r) {
        double ss = 0.0;
        for (std::size_t j = 0; j < dim; ++j)
            ss += static_cast<double>(x[r * dim + j]) * x[r * dim + j];
        EXPECT_FLOAT_EQ(inv[r], static_cast<float>(1.0 / std::sqrt(ss / dim + eps)));
    }
    // In place (y aliases x) gives the same result.
    auto xy = x;
    rmsnorm_fwd(rows, dim, eps, xy.data(), g.data(), xy.data(), inv.data());
    EXPECT_EQ(xy, y);
}

TEST(rmsnorm, eps_bounds_a_zero_row) {
    const std::vector<float> x(4, 0.0f), g(4, 1.0f);
    std::vector<float> y(4, 1.0f), inv(1);
    rmsnorm_fwd(1, 4, 0.25f, x.data(), g.data(), y.data(), inv.data());
    EXPECT_EQ(inv[0], 2.0f); // 1 / sqrt(0 + 0.25)
    for (float v : y)
        EXPECT_EQ(v, 0.0f);
}

TEST(rmsnorm, backward_matches_central_differences) {
    const std::size_t rows = 3, dim = 5;
    const float eps = 1e-3f;
    const auto xf = seeded(rows * dim, 11), gf = seeded(dim, 12), rf = seeded(rows * dim, 13);
    std::vector<float> y(xf.size()), inv(rows), dx(xf.size()), dg(dim, 0.0f);
    rmsnorm_fwd(rows, dim, eps, xf.data(), gf.data(), y.data(), inv.data());
    rmsnorm_bwd(rows, dim, xf.data(), gf.data(), inv.data(), rf.data(), dx.data(), dg.data());

    auto x = to_double(xf), g = to_double(gf);
    const auto r = to_double(rf);
    auto loss = [&] { // L = Σ r·y, so dL/dy = r
        const auto yd = rmsnorm_def(rows, dim, eps, x, g);
        double l = 0.0;
        for (std::size_t k = 0; k < yd.size(); ++k)
            l += r[k] * yd[k];
        return l;
    };
    // Inputs are O(1), 1/rms ~ 2: analytic fp32 gradients are within ~1e-6 of the truth.
    for (std::size_t k = 0; k < x.size(); ++k)
        EXPECT_NEAR(dx[k], central_diff(loss, x, k), 1e-5) << "dx " << k;
    for (std::size_t k = 0; k < g.size(); ++k)
        EXPECT_NEAR(dg[k], central_diff(loss, g, k), 1e-5) << "dgamma " << k;
}

TEST(rmsnorm, dgamma_accumulates_and_dx_overwrites) {
    const std::size_t rows = 6, dim = 8;
    const auto x = seeded(rows * dim, 21), g = seeded(dim, 22), dy = seeded(rows * dim, 23);
    std::vector<float> y(x.size()), inv(rows), dx(x.size()), dg(dim, 0.0f);
    rmsnorm_fwd(rows, dim, 1e-5f, x.data(), g.data(), y.data(), inv.data());
    rmsnorm_bwd(rows, dim, x.data(), g.data(), inv.data(), dy.data(), dx.data(), dg.data());

    const auto c = seeded(dim, 24);
    auto dg2 = c;
    std::vector<float> dx2(x.size(), std::numeric_limits<float>::quiet_NaN());
    for (int pass = 0; pass < 2; ++pass)
        rmsnorm_bwd(rows, dim, x.data(), g.data(), inv.data(), dy.data(), dx2.data(), dg2.data());
    EXPECT_EQ(dx2, dx);
    for (std::size_t j = 0; j < dim; ++j)
        EXPECT_NEAR(dg2[j], c[j] + 2.0f * dg[j], 1e-6) << "dgamma " << j;
    // dx may alias dy.
    auto dxy = dy;
    std::vector<float> dg3(dim, 0.0f);
    rmsnorm_bwd(rows, dim, x.data(), g.data(), inv.data(), dxy.data(), dxy.data(), dg3.data());
    EXPECT_EQ(dxy, dx);
}

TEST(rmsnorm, bad_shapes_and_eps_are_config_errors) {
    std::vector<float> buf(8, 1.0f), inv(2);
    EXPECT_THROW(rmsnorm_fwd(0, 4, 1e-5f, buf.data(), buf.data(), buf.data(), inv.data()),
                 ringscale::config_error);
    EXPECT_THROW(rmsnorm_fwd(2, 0, 1e-5f, buf.data(), buf.data(), buf.data(), inv.data()),
                 ringscale::config_error);
    EXPECT_THROW(rmsnorm_fwd(2, 4, -1.0f, buf.data(), buf.data(), buf.data(), inv.data()),
                 ringscale::config_error);
    EXPECT_THROW(
        rmsnorm_bwd(2, 0, buf.data(), buf.data(), inv.data(), buf.data(), buf.data(), buf.data()),
        ringscale::config_error);
}
