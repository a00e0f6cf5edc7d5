// The elementwise exponentials the CPU kernels' vectorised loops share (kernels/cpu/
// vec_math.hpp) against libm: exp_poly (fp32, GELU's tanh) within its ~1 ulp over its whole
// range, exp_poly_d (fp64, the cross-entropy's softmax) within a few ulp on [-708, 0], its clamp
// below -708 and NaN kept. Both are called here from a baseline-x86-64 loop and from a cloned
// one, so every code path the loader may pick on this CPU is checked.
#include "kernels/cpu/vec_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace ringscale::kernels::cpu;

namespace {

/// xs spread over [lo, hi]: n evenly spaced points, each nudged off the grid.
std::vector<double> spread(double lo, double hi, int n) {
    std::vector<double> x(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        x[i] = lo + (hi - lo) * (i + 0.5 * std::sin(i)) / (n - 1);
    return x;
}

RINGSCALE_VEC_CLONES void exp_d_cloned(const double* x, double* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        y[i] = exp_poly_d(x[i]);
}

RINGSCALE_VEC_CLONES void exp_f_cloned(const float* x, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        y[i] = exp_poly(x[i]);
}

} // namespace

TEST(VecMath, ExpPolyDoubleWithinAFewUlp) {
    const std::vector<double> x = spread(-708.0, 0.0, 200001);
    std::vector<double> y(x.size());
    exp_d_cloned(x.data(), y.data(), x.size());
    double worst = 0.0, worst_plain = 0.0; // the clone may contract to FMA, the plain call not
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double want = std::exp(x[i]);
        worst = std::max(worst, std::fabs(y[i] - want) / want);
        worst_plain = std::max(worst_plain, std::fabs(exp_poly_d(x[i]) - want) / want);
    }
    EXPECT_LT(worst, 8 * std::numeric_limits<double>::epsilon());
    EXPECT_LT(worst_plain, 8 * std::numeric_limits<double>::epsilon());
    EXPECT_EQ(exp_poly_d(0.0), 1.0);
}

TEST(VecMath, ExpPolyDoubleClampsAndKeepsNan) {
    const double floor = exp_poly_d(-708.0);
    EXPECT_GT(floor, 0.0);
    EXPECT_EQ(exp_poly_d(-1000.0), floor);
    EXPECT_EQ(exp_poly_d(-std::numeric_limits<double>::infinity()), floor);
    EXPECT_TRUE(std::isnan(exp_poly_d(std::numeric_limits<double>::quiet_NaN())));
}

TEST(VecMath, ExpPolyFloatWithinItsPolynomial) {
    const std::vector<double> xd = spread(-87.0, 87.0, 100001);
    std::vector<float> x(xd.begin(), xd.end()), y(x.size());
    exp_f_cloned(x.data(), y.data(), x.size());
    double worst = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double want = std::exp(static_cast<double>(x[i]));
        worst = std::max(worst, std::fabs(y[i] - want) / want);
    }
    EXPECT_LT(worst, 4 * std::numeric_limits<float>::epsilon());
}
