// kernels/cuda/cublaslt_gemm and cublaslt_quantize on the GPU against a double-precision
// GEMM on the host of the same rounded operands: bf16 and fp16 (fp32 accumulation, beta
// accumulating into D), fp8 E4M3 x E4M3 and E5M2 x E4M3 in the TN form with per-tensor
// scales as device operands, the quantiser's transposed copy and amax, and one descriptor per
// shape. Skips, with the reason, without a GPU (and the fp8 cases below compute capability 9).
#include "kernels/cuda/cublaslt_gemm.hpp"
#include "kernels/cuda/cublaslt_quantize.cuh"
#include "kernels/dev_buffer.hpp"
#include "kernels/elem.hpp"
#include "kernels/kernels.hpp"
#include "src/base/error.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::cuda;
using testing_support::seeded;

namespace {

// D[m, n] = op(A)·op(B) in double on host values (row-major, lt_shape's convention).
std::vector<double> gemm_ref(const lt_shape& s, const std::vector<float>& a,
                             const std::vector<float>& b) {
    std::vector<double> d(static_cast<std::size_t>(s.m * s.n), 0.0);
    for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j) {
            double acc = 0;
            for (std::int64_t p = 0; p < s.k; ++p) {
                const float x = s.a_trans ? a[static_cast<std::size_t>(p * s.m + i)]
                                          : a[static_cast<std::size_t>(i * s.k + p)];
                const float y = s.b_trans ? b[static_cast<std::size_t>(j * s.k + p)]
                                          : b[static_cast<std::size_t>(p * s.n + j)];
                acc += static_cast<double>(x) * y;
            }
            d[static_cast<std::size_t>(i * s.n + j)] = acc;
        }
    return d;
}

// |got - want| within fp32 accumulation's error of Σ|products| for every element.
void expect_gemm_close(const std::vector<float>& got, const std::vector<double>& want, double k,
                       const char* what) {
    ASSERT_EQ(got.size(), want.size());
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::fabs(got[i] - want[i]));
        scale = std::max(scale, std::fabs(want[i]));
    }
    EXPECT_LE(worst, 4 * k * 0x1p-24 * std::max(scale, 1.0)) << what;
}

class lt_gemm : public ::testing::Test {
  protected:
    void SetUp() override {
        RINGSCALE_SKIP_WITHOUT_DEVICE();
        m_dev = make_executor(device_kind::cuda);
        m_lt = std::make_unique<cublaslt_gemm>(m_dev->stream());
    }
    bool hopper() const {
        int dev = 0, major = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        return major >= 9;
    }
    std::unique_ptr<executor> m_dev;
    std::unique_ptr<cublaslt_gemm> m_lt;
};

// Host values rounded to `e` (bf16 or f16) and their device copy in that type.
struct half_operand {
    std::vector<float> rounded;
    dev_buffer<unsigned char> dev;
};

half_operand half_of(executor& d, elem e, const std::vector<float>& v) {
    half_operand h;
    h.rounded.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        h.rounded[i] = e == elem::bf16 ? round_to_bf16(v[i]) : round_to_f16(v[i]);
    dev_buffer<float> src(d, v);
    h.dev.allocate(d, v.size() * 2);
    kernels::convert(d, e, v.size(), src.data(), h.dev.data());
    d.synchronize();
    return h;
}

} // namespace

TEST_F(lt_gemm, bf16_and_fp16_accumulate_in_fp32_in_every_form) {
    executor& d = *m_dev;
    for (elem e : {elem::bf16, elem::f16})
        for (bool ta : {false, true})
            for (bool tb : {false, true}) {
                lt_shape s{70,
                           48,
                           96,
                           ta,
                           tb,
                           e == elem::bf16 ? lt_type::bf16 : lt_type::f16,
                           e == elem::bf16 ? lt_type::bf16 : lt_type::f16};
                const half_operand a = half_of(d, e, seeded(70 * 96, 1));
                const half_operand b = half_of(d, e, seeded(96 * 48, 2));
                const std::vector<float> d0 = seeded(70 * 48, 3);
                dev_buffer<float> out(d, d0);
                m_lt->run(s, a.dev.data(), b.dev.data(), out.data(), 1.0f, 1.0f);
                std::vector<double> want = gemm_ref(s, a.rounded, b.rounded);
                for (std::size_t i = 0; i < want.size(); ++i)
                    want[i] += d0[i]; // beta = 1 accumulates into D
                expect_gemm_close(out.download(), want, 96, "bf16/fp16 GEMM");
            }
    EXPECT_EQ(m_lt->descriptors(), 8u); // one per (type, form): reused, never remade
}

TEST_F(lt_gemm, fp8_tn_gemms_with_per_tensor_scales_match_the_rounded_reference) {
    if (!hopper())
        GTEST_SKIP() << "fp8 GEMMs need compute capability 9.0 (Hopper)";
    executor& d = *m_dev;
    const std::int64_t m = 64, n = 48, k = 96;
    for (lt_type ta : {lt_type::e4m3, lt_type::e5m2}) {
        const fp8_format fa = ta == lt_type::e4m3 ? fp8_format::e4m3 : fp8_format::e5m2;
        const std::vector<float> a = seeded(m * k, 4, 3.0f), b = seeded(n * k, 5, 0.02f);
        // Scales from each tensor's amax (current scaling), its dequantisation factor 1/s on
        // the device as cuBLASLt reads it.
        const float sa = fp8_max(fa) / 3.0f, sb = fp8_max(fp8_format::e4m3) / 0.02f;
        dev_buffer<float> a_dev(d, a), b_dev(d, b), amax(d, std::vector<float>{0.0f, 0.0f});
        dev_buffer<float> inv(d, std::vector<float>{1.0f / sa, 1.0f / sb});
        dev_buffer<unsigned char> qa(d, static_cast<std::size_t>(m * k)),
            qb(d, static_cast<std::size_t>(n * k)), qbt(d, static_cast<std::size_t>(n * k));
        quantize_fp8_cuda(ta, m, k, a_dev.data(), sa, false, qa.data(), amax.data(), d.stream());
        quantize_fp8_cuda(lt_type::e4m3, n, k, b_dev.data(), sb, false, qb.data(), amax.data() + 1,
                          d.stream());
        // The transposed copy of B, transposed back by a bf16-free check: B [k, n] as stored.
        quantize_fp8_cuda(lt_type::e4m3, n, k, b_dev.data(), sb, true, qbt.data(), amax.data() + 1,
                          d.stream());
        dev_buffer<float> out(d, static_cast<std::size_t>(m * n));
        const lt_shape s{m, n, k, false, true, ta, lt_type::e4m3};
        m_lt->run(s, qa.data(), qb.data(), out.data(), 1.0f, 0.0f, inv.data(), inv.data() + 1);
        std::vector<float> ra(a.size()), rb(b.size());
        for (std::size_t i = 0; i < a.size(); ++i)
            ra[i] = round_to_fp8(fa, a[i] * sa) / sa;
        for (std::size_t i = 0; i < b.size(); ++i)
            rb[i] = round_to_fp8(fp8_format::e4m3, b[i] * sb) / sb;
        expect_gemm_close(out.download(), gemm_ref(s, ra, rb), k, lt_type_name(ta));
        const std::vector<float> am = amax.download();
        float want_a = 0, want_b = 0;
        for (float v : a)
            want_a = std::max(want_a, std::fabs(v));
        for (float v : b)
            want_b = std::max(want_b, std::fabs(v));
        EXPECT_EQ(am[0], want_a);
        EXPECT_EQ(am[1], want_b);
        const std::vector<unsigned char> plain = qb.download(), moved = qbt.download();
        for (std::int64_t r = 0; r < n; ++r)
            for (std::int64_t c = 0; c < k; ++c)
                ASSERT_EQ(plain[static_cast<std::size_t>(r * k + c)],
                          moved[static_cast<std::size_t>(c * n + r)]);
    }
    // Not the TN form: refused with its reason before cuBLASLt is asked.
    const lt_shape nn{m, n, k, false, false, lt_type::e4m3, lt_type::e4m3};
    EXPECT_THROW(m_lt->run(nn, nullptr, nullptr, nullptr, 1.0f, 0.0f, nullptr, nullptr),
                 config_error);
}
