// The plan of a low-precision linear layer's cuBLASLt GEMMs (kernels/cuda/lowp_plan), on the
// host: every GEMM of every type is one cuBLASLt takes (fp8 in the TN form only), each plan
// executed on the host as cuBLASLt reads it (lt_shape's operands, transposed copies as
// planned) gives the layer's y, dx and dW, and which GPUs run which type.
#include "kernels/cuda/lowp_plan.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cuda;

namespace {

// The stored operand `u` reads: the tensor itself, or its transposed copy.
std::vector<double> stored(const lowp_use& u, const std::vector<double>& t) {
    if (!u.transposed)
        return t;
    std::vector<double> c(t.size());
    for (std::int64_t r = 0; r < u.rows; ++r)
        for (std::int64_t k = 0; k < u.cols; ++k)
            c[k * u.rows + r] = t[r * u.cols + k];
    return c;
}

// D = op(A)·op(B) + beta·D as lt_shape defines it (row-major; A [m, k] or [k, m] when a_trans,
// B [k, n] or [n, k] when b_trans).
void run_plan(const lowp_plan& p, const std::vector<double>& a, const std::vector<double>& b,
              std::vector<double>& d) {
    const lt_shape& s = p.shape;
    for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j) {
            double sum = 0;
            for (std::int64_t k = 0; k < s.k; ++k)
                sum += (s.a_trans ? a[k * s.m + i] : a[i * s.k + k]) *
                       (s.b_trans ? b[j * s.k + k] : b[k * s.n + j]);
            d[i * s.n + j] = sum + p.beta * d[i * s.n + j];
        }
}

std::vector<double> seeded(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> v(n);
    for (auto& x : v)
        x = u(rng);
    return v;
}

} // namespace

TEST(lowp_plan, every_plan_computes_the_layer_and_is_one_cublaslt_takes) {
    const linear_shape s{32, 16, 48};
    const auto x = seeded(32 * 16, 1), w = seeded(48 * 16, 2), dy = seeded(32 * 48, 3);
    auto tensor = [&](lowp_operand op) -> const std::vector<double>& {
        return op == lowp_operand::x ? x : op == lowp_operand::w ? w : dy;
    };
    for (lowp_type t : {lowp_type::bf16, lowp_type::f16, lowp_type::fp8}) {
        EXPECT_EQ(lowp_shape_refusal(t, s), "") << static_cast<int>(t);
        const lowp_plan f = plan_lowp_gemm(t, s, lowp_pass::fwd);
        const lowp_plan dx = plan_lowp_gemm(t, s, lowp_pass::dx);
        const lowp_plan dw = plan_lowp_gemm(t, s, lowp_pass::dw);
        std::vector<double> y(32 * 48), gx(32 * 16), gw(48 * 16, 0.5);
        run_plan(f, stored(f.a, tensor(f.a.op)), stored(f.b, tensor(f.b.op)), y);
        run_plan(dx, stored(dx.a, tensor(dx.a.op)), stored(dx.b, tensor(dx.b.op)), gx);
        run_plan(dw, stored(dw.a, tensor(dw.a.op)), stored(dw.b, tensor(dw.b.op)), gw);
        for (std::size_t tk = 0; tk < 32; ++tk)
            for (std::size_t o = 0; o < 48; ++o) {
                double want = 0;
                for (std::size_t i = 0; i < 16; ++i)
                    want += x[tk * 16 + i] * w[o * 16 + i];
                ASSERT_NEAR(y[tk * 48 + o], want, 1e-12);
            }
        for (std::size_t tk = 0; tk < 32; ++tk)
            for (std::size_t i = 0; i < 16; ++i) {
                double want = 0;
                for (std::size_t o = 0; o < 48; ++o)
                    want += dy[tk * 48 + o] * w[o * 16 + i];
                ASSERT_NEAR(gx[tk * 16 + i], want, 1e-12);
            }
        for (std::size_t o = 0; o < 48; ++o)
            for (std::size_t i = 0; i < 16; ++i) {
                double want = 0.5; // dW accumulates
                for (std::size_t tk = 0; tk < 32; ++tk)
                    want += dy[tk * 48 + o] * x[tk * 16 + i];
                ASSERT_NEAR(gw[o * 16 + i], want, 1e-12);
            }
        EXPECT_EQ(f.beta, 0.0f);
        EXPECT_EQ(dx.beta, 0.0f);
        EXPECT_EQ(dw.beta, 1.0f);
    }
}

TEST(lowp_plan, fp8_reads_e4m3_activations_and_weights_e5m2_gradients_and_transposed_copies) {
    const linear_shape s{32, 16, 48};
    const lowp_plan dx = plan_lowp_gemm(lowp_type::fp8, s, lowp_pass::dx);
    const lowp_plan dw = plan_lowp_gemm(lowp_type::fp8, s, lowp_pass::dw);
    EXPECT_EQ(dx.shape.a, lt_type::e5m2);
    EXPECT_EQ(dx.shape.b, lt_type::e4m3);
    EXPECT_TRUE(dx.b.transposed);   // Wᵀ
    EXPECT_TRUE(dw.a.transposed);   // dyᵀ
    EXPECT_TRUE(dw.b.transposed);   // xᵀ
    EXPECT_FALSE(dw.shape.a_trans); // TN: A as stored, B stored [n, k]
    EXPECT_TRUE(dw.shape.b_trans);
    // bf16 reads everything as stored; the same forms in fp8 are what cuBLASLt refuses.
    for (lowp_pass p : {lowp_pass::dx, lowp_pass::dw}) {
        lowp_plan b = plan_lowp_gemm(lowp_type::bf16, s, p);
        EXPECT_FALSE(b.a.transposed || b.b.transposed);
        EXPECT_EQ(lt_refusal(b.shape), "");
        b.shape.a = lt_type::e5m2;
        b.shape.b = lt_type::e4m3;
        EXPECT_NE(lt_refusal(b.shape), "");
    }
    EXPECT_EQ(plan_lowp_gemm(lowp_type::f16, s, lowp_pass::fwd).shape.a, lt_type::f16);
}

TEST(lowp_plan, fp8_needs_multiples_of_16_where_bf16_takes_any_shape) {
    for (const linear_shape& s :
         {linear_shape{24, 16, 48}, linear_shape{32, 24, 48}, linear_shape{32, 16, 40}}) {
        EXPECT_NE(lowp_shape_refusal(lowp_type::fp8, s), "") << s.tokens << s.in << s.out;
        EXPECT_EQ(lowp_shape_refusal(lowp_type::bf16, s), "");
    }
}

TEST(lowp_plan, which_gpus_run_which_type) {
    EXPECT_EQ(lowp_device_refusal(lowp_type::bf16, 8, 0), "");
    EXPECT_EQ(lowp_device_refusal(lowp_type::f16, 9, 0), "");
    EXPECT_EQ(lowp_device_refusal(lowp_type::fp8, 9, 0), "");
    for (auto [major, minor] : {std::pair{8, 0}, std::pair{8, 9}, std::pair{10, 0}}) {
        const std::string why = lowp_device_refusal(lowp_type::fp8, major, minor);
        EXPECT_NE(why.find("needs Hopper"), std::string::npos) << why;
        EXPECT_EQ(why.find('\n'), std::string::npos);
    }
    EXPECT_NE(lowp_device_refusal(lowp_type::bf16, 7, 5), "");
}
