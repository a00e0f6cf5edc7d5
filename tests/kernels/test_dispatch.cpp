// The one place a kernel's backend is chosen (kernels/dispatch.cpp): the CPU executor runs the
// CPU backend, computing bit for bit what the CPU kernels compute when called directly; TF32
// is refused there; where CUDA is not built, the CUDA backend answers "not compiled" (the
// hooks). No GPU needed.
#include "kernels/cpu/adamw.hpp"
#include "kernels/cpu/cross_entropy.hpp"
#include "kernels/cpu/embedding.hpp"
#include "kernels/cpu/gelu.hpp"
#include "kernels/cpu/layout_bhsd.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/rmsnorm.hpp"
#include "kernels/gpu.hpp"
#include "kernels/kernels.hpp"
#include "kernels/random.hpp"
#include "src/base/error.hpp"
#include "tests/support/thrown_by.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

using namespace ringscale;
using testing_support::thrown_by;
using namespace ringscale::kernels;

namespace {

std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST(dispatch, the_cpu_executor_runs_the_cpu_backend_and_tf32_is_refused_there) {
    const auto exec = make_executor(device_kind::cpu);
    EXPECT_EQ(exec->kind(), device_kind::cpu);
    EXPECT_TRUE(attention_supports(*exec, elem::f32));
    EXPECT_TRUE(attention_supports(*exec, elem::bf16)); // emulated (kernels/cpu/attention_cpu.hpp)
    EXPECT_TRUE(attention_supports(*exec, elem::f16));
    EXPECT_NE(train_precision(*exec, gemm_math::fp32).find("fp32"), std::string::npos);
    EXPECT_THROW(prepare_gemm(*exec, gemm_math::tf32), config_error);
    EXPECT_NE(thrown_by([&] {
                  prepare_gemm(*exec, gemm_math::tf32);
              }).find("--tf32 on needs --device cuda"),
              std::string::npos);
    EXPECT_NO_THROW(prepare_gemm(*exec, gemm_math::fp32));
    EXPECT_NO_THROW(require_compiled(device_kind::cpu));
}

TEST(dispatch, the_cuda_backend_is_not_compiled_into_a_cpu_only_build) {
    if (cuda_compiled())
        GTEST_SKIP() << "this build has CUDA: the not-compiled hooks are checked by the "
                        "-DRINGSCALE_ENABLE_CUDA=OFF build";
    EXPECT_THROW(make_executor(device_kind::cuda), not_compiled_error);
    EXPECT_NE(thrown_by([] {
                  require_compiled(device_kind::cuda);
              }).find("--device cuda: the CUDA backend is not compiled into this ringscale"),
              std::string::npos);
    EXPECT_EQ(gpu_count(), 0);
}

TEST(dispatch, the_cpu_executor_computes_what_the_cpu_kernels_compute_bit_for_bit) {
    const auto exec_ptr = make_executor(device_kind::cpu);
    executor& exec = *exec_ptr;
    loss_scratch scratch;
    const std::size_t t = 24, h = 64, v = 40;
    const auto x = seeded(t * h, 1), w = seeded(3 * h * h, 2, 0.1f), b = seeded(3 * h, 3);
    const auto gamma = seeded(h, 4), table = seeded(v * h, 5), dy = seeded(3 * t * h, 6);
    std::vector<std::int32_t> ids(t), targets(t);
    for (std::size_t i = 0; i < t; ++i) {
        ids[i] = static_cast<std::int32_t>((7 * i + 3) % v);
        targets[i] = static_cast<std::int32_t>((5 * i + 1) % v);
    }
    auto both = [](auto direct, auto through, std::size_t n, const char* what) {
        std::vector<float> a(n, 0.5f), c(n, 0.5f);
        direct(a.data());
        through(c.data());
        EXPECT_TRUE(same_bits(a, c)) << what;
    };
    both([&](float* o) { cpu::embedding_fwd(t, v, h, table.data(), ids.data(), o); },
         [&](float* o) { kernels::embedding_fwd(exec, t, v, h, table.data(), ids.data(), o); },
         t * h, "emb");
    both([&](float* o) { cpu::embedding_bwd(t, v, h, ids.data(), x.data(), o); },
         [&](float* o) { kernels::embedding_bwd(exec, t, v, h, ids.data(), x.data(), o); }, v * h,
         "demb");
    std::vector<float> inv(t);
    both([&](float* o) { cpu::rmsnorm_fwd(t, h, 1e-5f, x.data(), gamma.data(), o, inv.data()); },
         [&](float* o) {
             kernels::rmsnorm_fwd(exec, t, h, 1e-5f, x.data(), gamma.data(), o, inv.data());
         },
         t * h, "norm");
    both(
        [&](float* o) {
            cpu::linear_fwd({t, h, 3 * h}, x.data(), w.data(), b.data(), o);
        },
        [&](float* o) {
            kernels::linear_fwd(exec, gemm_math::fp32, {t, h, 3 * h}, x.data(), w.data(), b.data(),
                                o);
        },
        t * 3 * h, "linear");
    both(
        [&](float* o) {
            cpu::linear_bwd({t, h, 3 * h}, x.data(), w.data(), dy.data(), nullptr, o, nullptr);
        },
        [&](float* o) {
            kernels::linear_bwd(exec, gemm_math::fp32, {t, h, 3 * h}, x.data(), w.data(), dy.data(),
                                nullptr, o, nullptr);
        },
        3 * h * h, "dW");
    both(
        [&](float* o) {
            float* const dst[3] = {o, o + t * h, o + 2 * t * h};
            std::vector<float> scratch(t * 3 * h);
            cpu::linear_fwd_heads({t, h, 3 * h}, x.data(), w.data(), b.data(), 12, 1, h, dst,
                                  scratch.data());
        },
        [&](float* o) {
            float* const dst[3] = {o, o + t * h, o + 2 * t * h};
            std::vector<float> scratch(t * 3 * h);
            kernels::linear_fwd_heads(exec, gemm_math::fp32, {t, h, 3 * h}, x.data(), w.data(),
                                      b.data(), {2, 12}, 1, h, dst, scratch.data());
        },
        t * 3 * h, "linear as heads");
    std::vector<float> dw(h * h);
    both(
        [&](float* o) {
            std::vector<float> scratch(t * h);
            cpu::linear_bwd_heads({t, h, h}, x.data(), w.data(), dy.data(), 12, 1, h, o, dw.data(),
                                  nullptr, scratch.data());
        },
        [&](float* o) {
            std::vector<float> scratch(t * h);
            kernels::linear_bwd_heads(exec, gemm_math::fp32, {t, h, h}, x.data(), w.data(),
                                      dy.data(), {2, 12}, 1, h, o, dw.data(), nullptr,
                                      scratch.data());
        },
        t * h, "linear backward, dx as heads");
    both([&](float* o) { cpu::gelu_fwd(t * h, x.data(), o); },
         [&](float* o) { kernels::gelu_fwd(exec, t * h, x.data(), o); }, t * h, "gelu");
    both(
        [&](float* o) {
            cpu::copy_bhsd(true, {2, 12}, 2, 32, dy.data(), 3 * h, h, o);
        },
        [&](float* o) {
            kernels::to_bhsd(exec, {2, 12}, 2, 32, dy.data(), 3 * h, h, o);
        },
        t * h, "bhsd");
    const auto logits = seeded(t * v, 7, 3.0f);
    EXPECT_EQ(
        cpu::cross_entropy_fwd(t, v, 2 * t, logits.data(), targets.data()),
        kernels::cross_entropy_fwd(exec, t, v, 2 * t, logits.data(), targets.data(), scratch));
    both([&](float* o) { cpu::cross_entropy_bwd(t, v, 2 * t, logits.data(), targets.data(), o); },
         [&](float* o) {
             kernels::cross_entropy_bwd(exec, t, v, 2 * t, logits.data(), targets.data(), o);
         },
         t * v, "dlogits");
    adamw_params hp;
    std::vector<float> p1 = x, m1(x.size(), 0.1f), v1(x.size(), 0.2f);
    std::vector<float> p2 = p1, m2 = m1, v2 = v1;
    cpu::adamw_step(hp, 2, x.size(), p1.data(), dy.data(), m1.data(), v1.data());
    kernels::adamw_step(exec, hp, 2, x.size(), p2.data(), dy.data(), m2.data(), v2.data());
    EXPECT_TRUE(same_bits(p1, p2) && same_bits(m1, m2) && same_bits(v1, v2));
}
