// gelu (tanh form): forward against the double-precision definition, backward against central
// finite differences in double, known values, and in-place use.
#include "kernels/cpu/gelu.hpp"
#include "kernels/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;

namespace {

double gelu_def(double x) {
    const double pi = 3.14159265358979323846;
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}

std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

} // namespace

TEST(gelu, forward_matches_double_definition) {
    const auto x = seeded(4096, 1, 8.0f); // [-8, 8): both tails and the curved middle
    std::vector<float> y(x.size());
    gelu_fwd(x.size(), x.data(), y.data());
    // fp32 tanh and products: within 2e-6 absolute + 1e-6 relative of the double value.
    for (std::size_t k = 0; k < x.size(); ++k) {
        const double want = gelu_def(x[k]);
        ASSERT_NEAR(y[k], want, 2e-6 + 1e-6 * std::fabs(want)) << "x = " << x[k];
    }
}

TEST(gelu, known_values) {
    const std::vector<float> x{0.0f, 1.0f, -1.0f, 10.0f, -10.0f};
    std::vector<float> y(x.size());
    gelu_fwd(x.size(), x.data(), y.data());
    EXPECT_EQ(y[0], 0.0f);
    EXPECT_NEAR(y[1], 0.8411920f, 1e-6); // 0.5·(1 + tanh(0.7978846·1.044715))
    EXPECT_NEAR(y[2], -0.1588080f, 1e-6);
    EXPECT_EQ(y[3], 10.0f);          // tanh saturates to 1 in fp32
    EXPECT_NEAR(y[4], 0.0f, 1e-20f); // and to −1
}

TEST(gelu, backward_matches_central_differences) {
    const auto x = seeded(257, 11, 5.0f), dy = seeded(257, 12, 1.0f);
    std::vector<float> dx(x.size());
    gelu_bwd(x.size(), x.data(), dy.data(), dx.data());
    const double h = 1e-6;
    for (std::size_t k = 0; k < x.size(); ++k) {
        const double xd = x[k];
        const double fd = dy[k] * (gelu_def(xd + h) - gelu_def(xd - h)) / (2.0 * h);
        // gelu' ∈ [−0.13, 1.13]: the fp32 analytic value is within 1e-6 of the double FD.
        EXPECT_NEAR(dx[k], fd, 2e-6) << "x = " << x[k];
    }
}

TEST(gelu, in_place_and_overwrite) {
    const auto x = seeded(100, 21, 4.0f), dy = seeded(100, 22, 1.0f);
    std::vector<float> y(x.size(), 7.0f), dx(x.size(), 7.0f);
    gelu_fwd(x.size(), x.data(), y.data());
    gelu_bwd(x.size(), x.data(), dy.data(), dx.data());
    auto xy = x;
    gelu_fwd(xy.size(), xy.data(), xy.data());
    EXPECT_EQ(xy, y);
    auto dxy = dy; // dx aliases dy; the old dx contents (7) never leak in
    gelu_bwd(dxy.size(), x.data(), dxy.data(), dxy.data());
    EXPECT_EQ(dxy, dx);
    gelu_fwd(0, nullptr, nullptr); // n = 0 is a no-op
}
