// adamw: a hand-computed two-step example with exact expected numbers, bit-for-bit equality
// of sharded and whole updates and of an update rounded once per operation (as the CUDA
// kernel rounds), and rejected hyperparameters.
#include "kernels/cpu/adamw.hpp"
#include "kernels/random.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;

// lr = 0.5, β1 = β2 = 0.5, eps = 1, wd = 0.25 (decay factor 1 − 0.125 = 0.875), p0 = 2, −1, 4
// with gradients (5, −5, 0) then (1, −1, 0). By hand, element 0:
//   step 1: m = 2.5, v = 12.5, m̂ = 2.5/0.5 = 5, v̂ = 12.5/0.5 = 25, p = 2·0.875 − 0.5·5/(5+1) = 4/3
//   step 2: m = 1.75, v = 6.75, m̂ = 1.75/0.75 = 7/3, v̂ = 6.75/0.75 = 9,
//           p = (4/3)·0.875 − 0.5·(7/3)/(3+1) = 7/6 − 7/24 = 7/8.
// Element 1 mirrors the moments: p = −0.875 + 5/12 = −11/24, then −77/192 + 7/24 = −7/64.
// Element 2 has zero gradient, so only the decoupled decay acts: 4 → 3.5 → 3.0625.
TEST(adamw, two_step_hand_computed_example) {
    const adamw_params hp{0.5f, 0.5f, 0.5f, 1.0f, 0.25f};
    std::vector<float> p{2.0f, -1.0f, 4.0f}, m(3, 0.0f), v(3, 0.0f);
    const std::vector<float> g1{5.0f, -5.0f, 0.0f}, g2{1.0f, -1.0f, 0.0f};

    adamw_step(hp, 1, 3, p.data(), g1.data(), m.data(), v.data());
    EXPECT_EQ(m, (std::vector<float>{2.5f, -2.5f, 0.0f}));
    EXPECT_EQ(v, (std::vector<float>{12.5f, 12.5f, 0.0f}));
    EXPECT_FLOAT_EQ(p[0], 4.0f / 3.0f);
    EXPECT_FLOAT_EQ(p[1], -11.0f / 24.0f);
    EXPECT_EQ(p[2], 3.5f);

    adamw_step(hp, 2, 3, p.data(), g2.data(), m.data(), v.data());
    EXPECT_EQ(m, (std::vector<float>{1.75f, -1.75f, 0.0f}));
    EXPECT_EQ(v, (std::vector<float>{6.75f, 6.75f, 0.0f}));
    EXPECT_FLOAT_EQ(p[0], 0.875f);     // 7/8
    EXPECT_FLOAT_EQ(p[1], -0.109375f); // −7/64
    EXPECT_EQ(p[2], 3.0625f);
}

TEST(adamw, first_step_moves_each_weight_by_about_lr) {
    // Bias correction makes step 1's update lr·g/(|g| + eps) ≈ ±lr whatever the gradient scale.
    const adamw_params hp{1e-2f, 0.9f, 0.999f, 1e-8f, 0.0f};
    std::vector<float> p{0.0f, 0.0f, 0.0f}, m(3, 0.0f), v(3, 0.0f);
    const std::vector<float> g{1e-3f, -7.0f, 300.0f};
    adamw_step(hp, 1, 3, p.data(), g.data(), m.data(), v.data());
    // Expected lr·g/(|g| + eps) in double; fp32 moments and bias corrections: 1e-6 relative.
    for (std::size_t k = 0; k < g.size(); ++k) {
        const double want = -1e-2 * g[k] / (std::fabs(g[k]) + 1e-8);
        EXPECT_NEAR(p[k], want, 1e-8) << "element " << k;
    }
    EXPECT_NEAR(p[0], -1e-2 + 1e-7, 1e-8); // the eps term is visible for a tiny gradient
}

TEST(adamw, sharded_update_equals_whole_update_bit_for_bit) {
    const std::size_t n = 1001;
    const adamw_params hp{3e-3f, 0.9f, 0.95f, 1e-8f, 0.1f};
    std::vector<float> p(n), m(n, 0.0f), v(n, 0.0f), g(n);
    fill_uniform(p.data(), n, 1, 0);
    const auto p0 = p;
    auto ps = p, ms = m, vs = v;
    // Uneven shard edges, including ones that are not multiples of any vector width.
    const std::vector<std::size_t> edges{0, 1, 8, 13, 333, 334, 640, 1000, 1001};
    for (std::int64_t step = 1; step <= 3; ++step) {
        fill_uniform(g.data(), n, 100 + step, 0, 0.5f);
        adamw_step(hp, step, n, p.data(), g.data(), m.data(), v.data());
        for (std::size_t s = 0; s + 1 < edges.size(); ++s) {
            const std::size_t lo = edges[s], len = edges[s + 1] - lo;
            adamw_step(hp, step, len, ps.data() + lo, g.data() + lo, ms.data() + lo,
                       vs.data() + lo);
        }
    }
    EXPECT_EQ(std::memcmp(p.data(), ps.data(), n * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(m.data(), ms.data(), n * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(v.data(), vs.data(), n * sizeof(float)), 0);
    EXPECT_NE(p, p0); // the updates really moved the parameters
}

namespace {

// One element's update with every multiply, add, divide and square root rounded on its own:
// each result passes through a volatile float, so no compiler fuses a multiply and an add.
void update_rounded_once(const adamw_params& hp, std::int64_t step, float& p, float g, float& m,
                         float& v) {
    const double t = static_cast<double>(step);
    const float bc1 = static_cast<float>(1.0 - std::pow(static_cast<double>(hp.beta1), t));
    const float bc2 = static_cast<float>(1.0 - std::pow(static_cast<double>(hp.beta2), t));
    const float decay = 1.0f - hp.lr * hp.weight_decay;
    volatile float a = hp.beta1 * m, b = (1.0f - hp.beta1) * g;
    m = a + b;
    volatile float gg = g * g;
    a = hp.beta2 * v;
    b = (1.0f - hp.beta2) * gg;
    v = a + b;
    volatile float m_hat = m / bc1, v_hat = v / bc2;
    volatile float root = std::sqrt(static_cast<float>(v_hat));
    volatile float denom = root + hp.eps;
    volatile float ratio = m_hat / denom;
    volatile float update = hp.lr * ratio, kept = p * decay;
    p = kept - update;
}

} // namespace

// The target clones (AVX-512, AVX2 with FMA, SSE2) and the GPU give the same bits: no clone
// fuses b1·m + (1−b1)·g into an FMA (the AVX-512 clone did, 3 ulp off the GPU's update).
TEST(adamw, every_operation_rounds_once_as_on_a_gpu) {
    const std::size_t n = 4099;
    const adamw_params hp{1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f};
    std::vector<float> p(n), m(n, 0.0f), v(n, 0.0f), g(n);
    fill_uniform(p.data(), n, 31, 0);
    auto pr = p, mr = m, vr = v;
    for (std::int64_t step = 1; step <= 3; ++step) {
        fill_uniform(g.data(), n, 40 + step, 0);
        adamw_step(hp, step, n, p.data(), g.data(), m.data(), v.data());
        for (std::size_t k = 0; k < n; ++k)
            update_rounded_once(hp, step, pr[k], g[k], mr[k], vr[k]);
    }
    std::size_t differ = 0;
    for (std::size_t k = 0; k < n; ++k)
        differ += std::memcmp(&p[k], &pr[k], sizeof(float)) != 0 ||
                  std::memcmp(&m[k], &mr[k], sizeof(float)) != 0 ||
                  std::memcmp(&v[k], &vr[k], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0u) << "of " << n << " elements";
}

TEST(adamw, bad_hyperparameters_and_step_are_config_errors) {
    float p = 1.0f, g = 1.0f, m = 0.0f, v = 0.0f;
    const adamw_params ok{};
    EXPECT_THROW(adamw_step(ok, 0, 1, &p, &g, &m, &v), ringscale::config_error);
    adamw_params bad = ok;
    bad.beta1 = 1.0f;
    EXPECT_THROW(adamw_step(bad, 1, 1, &p, &g, &m, &v), ringscale::config_error);
    bad = ok;
    bad.beta2 = -0.1f;
    EXPECT_THROW(adamw_step(bad, 1, 1, &p, &g, &m, &v), ringscale::config_error);
    bad = ok;
    bad.lr = -1.0f;
    EXPECT_THROW(adamw_step(bad, 1, 1, &p, &g, &m, &v), ringscale::config_error);
    bad = ok;
    bad.weight_decay = -0.5f;
    EXPECT_THROW(adamw_step(bad, 1, 1, &p, &g, &m, &v), ringscale::config_error);
    EXPECT_EQ(p, 1.0f); // a rejected call changes nothing
}
