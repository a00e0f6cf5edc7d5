// The CUDA backend's training-step layers (kernels/cuda/backend_train.cpp) against the CPU
// backend on seeded inputs: the embedding and the BHSD transposes exactly (the gradient up to the
// order of its atomic sums), the whole model's loss and gradient within the bf16-attention error,
// and the single-rank reference run on the GPU. Skips, with the reason, without a GPU.
#include "kernels/dev_mask.hpp"
#include "kernels/gpu.hpp"
#include "kernels/mask_spec.hpp"
#include "kernels/model/reference_train.hpp"
#include "kernels/model/transformer.hpp"
#include "src/base/error.hpp"
#include "tests/kernels/cuda/train_model_rig.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;
using test_model::loss_and_grads;
using test_model::max_abs;
using test_model::small_model;
using testing_support::seeded;

namespace {

template <class T>
std::vector<T> on_host(const dev_buffer<T>& b) {
    return b.download();
}

} // namespace

class gpu_train_ops : public ::testing::Test {
  protected:
    void SetUp() override {
        RINGSCALE_SKIP_WITHOUT_DEVICE();
        m_dev = make_executor(device_kind::cuda);
        m_ops = std::make_unique<train_context>(*m_dev, false);
    }
    std::unique_ptr<executor> m_dev;
    std::unique_ptr<train_context> m_ops;
};

TEST_F(gpu_train_ops, embedding_and_transposes_match_the_cpu_backend) {
    executor& cpu = default_cpu_context().exec();
    const std::size_t t = 96, v = 50, h = 128;
    const auto table = seeded(v * h, 1), dout = seeded(t * h, 2), x = seeded(t * 3 * h, 3);
    std::vector<std::int32_t> ids(t);
    for (std::size_t i = 0; i < t; ++i)
        ids[i] = static_cast<std::int32_t>((i * 7) % v); // repeated ids: atomics collide
    std::vector<float> want(t * h), dwant(v * h, 0.25f);
    kernels::embedding_fwd(cpu, t, v, h, table.data(), ids.data(), want.data());
    kernels::embedding_bwd(cpu, t, v, h, ids.data(), dout.data(), dwant.data());
    executor& d = *m_dev;
    dev_buffer<float> tab(d, table), out(d, t * h), dtab(d, std::vector<float>(v * h, 0.25f)),
        dout_d(d, dout), x_d(d, x), bh(d, t * h), back(d, std::vector<float>(t * 3 * h, 0.0f));
    dev_buffer<std::int32_t> ids_d(d, ids);
    kernels::embedding_fwd(d, t, v, h, tab.data(), ids_d.data(), out.data());
    kernels::embedding_bwd(d, t, v, h, ids_d.data(), dout_d.data(), dtab.data());
    EXPECT_EQ(on_host(out), want);
    testing_support::expect_close(on_host(dtab), dwant, 1e-5f, 1e-6f, "embedding_bwd");
    const batch_shape s{3, 32};
    std::vector<float> bwant(t * h), backwant(t * 3 * h, 0.0f);
    kernels::to_bhsd(cpu, s, 2, 64, x.data(), 3 * h, h, bwant.data());
    kernels::from_bhsd(cpu, s, 2, 64, bwant.data(), 3 * h, h, backwant.data());
    kernels::to_bhsd(d, s, 2, 64, x_d.data(), 3 * h, h, bh.data());
    kernels::from_bhsd(d, s, 2, 64, bh.data(), 3 * h, h, back.data());
    EXPECT_EQ(on_host(bh), bwant);
    EXPECT_EQ(on_host(back), backwant);
}

// The model through the CUDA backend against the CPU backend: the attention reads bf16 Q, K,
// V, dO on the GPU (unit roundoff 2^-9), so the two agree to the bf16 level, not to fp32.
TEST_F(gpu_train_ops, the_model_matches_the_cpu_backend_to_the_bf16_attention_error) {
    const model_config cfg = small_model();
    std::vector<float> g_cpu, g_gpu;
    const double l_cpu = loss_and_grads(default_cpu_context(), cfg, g_cpu);
    const double l_gpu = loss_and_grads(*m_ops, cfg, g_gpu);
    EXPECT_NEAR(l_gpu, l_cpu, 1e-3 * l_cpu);
    const double gmax = max_abs(g_cpu);
    ASSERT_GT(gmax, 0.0);
    testing_support::expect_close(g_gpu, g_cpu, static_cast<float>(2e-2 * gmax), 0.0f,
                                  "whole-model gradient");
}

TEST_F(gpu_train_ops, swiglu_matches_the_cpu_backend) {
    executor& cpu = default_cpu_context().exec();
    const std::size_t rows = 70, f = 96;
    const auto h1 = seeded(rows * 2 * f, 4), dg = seeded(rows * f, 5);
    std::vector<float> g(rows * f), dh1(rows * 2 * f);
    kernels::swiglu_fwd(cpu, rows, f, h1.data(), g.data());
    kernels::swiglu_bwd(cpu, rows, f, h1.data(), dg.data(), dh1.data());
    executor& d = *m_dev;
    dev_buffer<float> h1_d(d, h1), dg_d(d, dg), g_d(d, rows * f), dh1_d(d, rows * 2 * f);
    kernels::swiglu_fwd(d, rows, f, h1_d.data(), g_d.data());
    kernels::swiglu_bwd(d, rows, f, h1_d.data(), dg_d.data(), dh1_d.data());
    testing_support::expect_close(on_host(g_d), g, 1e-5f, 1e-6f, "swiglu_fwd");
    testing_support::expect_close(on_host(dh1_d), dh1, 1e-5f, 1e-6f, "swiglu_bwd");
}

// Grouped-query attention (2 query heads on 1 K/V head) and a SwiGLU MLP through the CUDA
// backend against the CPU backend, to the bf16-attention error as the plain model.
TEST_F(gpu_train_ops, gqa_and_swiglu_match_the_cpu_backend_to_the_bf16_attention_error) {
    model_config cfg = small_model();
    cfg.kv_heads = 1;
    cfg.ffn = 192;
    cfg.mlp = mlp_kind::swiglu;
    std::vector<float> g_cpu, g_gpu;
    const double l_cpu = loss_and_grads(default_cpu_context(), cfg, g_cpu);
    const double l_gpu = loss_and_grads(*m_ops, cfg, g_gpu);
    EXPECT_NEAR(l_gpu, l_cpu, 1e-3 * l_cpu);
    const double gmax = max_abs(g_cpu);
    ASSERT_GT(gmax, 0.0);
    testing_support::expect_close(g_gpu, g_cpu, static_cast<float>(2e-2 * gmax), 0.0f,
                                  "whole-model gradient");
}

TEST_F(gpu_train_ops, the_gpu_reference_run_trains_and_tracks_the_cpu_run) {
    const model_config cfg = small_model();
    const param_layout layout(cfg);
    std::vector<float> a(layout.total()), b(layout.total());
    init_params(cfg, layout, 4, a.data());
    b = a;
    adamw_params hp;
    const auto l_cpu = reference_train(cfg, 3, 2, 64, 4, hp, a.data());
    const auto l_gpu = reference_train(cfg, 3, 2, 64, 4, hp, b.data(), nullptr, *m_ops);
    ASSERT_EQ(l_gpu.size(), l_cpu.size());
    EXPECT_LT(l_gpu.back(), l_gpu.front());
    for (std::size_t i = 0; i < l_cpu.size(); ++i)
        EXPECT_NEAR(l_gpu[i], l_cpu[i], 1e-3 * l_cpu[i]) << "step " << i + 1;
    EXPECT_GT(m_dev->device_peak_bytes(), 4u * 4u * layout.total()); // state on the device
}

TEST_F(gpu_train_ops, tf32_is_recorded_and_stays_close) {
    const auto tf32 = std::make_unique<train_context>(*m_dev, true);
    EXPECT_NE(tf32->precision().find("TF32"), std::string::npos) << tf32->precision();
    EXPECT_EQ(m_ops->precision().find("TF32"), std::string::npos) << m_ops->precision();
    const model_config cfg = small_model();
    std::vector<float> g_fp32, g_tf32;
    const double l_fp32 = loss_and_grads(*m_ops, cfg, g_fp32);
    const double l_tf32 = loss_and_grads(*tf32, cfg, g_tf32);
    EXPECT_NEAR(l_tf32, l_fp32, 1e-3 * l_fp32);
    testing_support::expect_close(g_tf32, g_fp32, static_cast<float>(2e-2 * max_abs(g_fp32)), 0.0f,
                                  "TF32 gradient");
}

// Packed documents on the GPU: the masked model's loss and gradient track the CPU's with the same
// mask (its arrays on the device through kernels::dev_mask), the dense gradient lies outside that
// tolerance (so the mask was applied), and a mask whose arrays are only in host memory is
// refused with one line, never computed densely.
TEST_F(gpu_train_ops, a_docs_mask_runs_masked_not_densely) {
    const model_config cfg = small_model();
    mask_spec spec;
    spec.docs = "fixed:32";
    const auto docs = std::make_shared<const attention_mask>(spec, 64, true);
    std::vector<float> g_gpu, g_cpu, g_dense;
    try {
        loss_and_grads(*m_ops, cfg, g_gpu, docs->view());
        ADD_FAILURE() << "the masked forward ran on host arrays";
    } catch (const config_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("device memory"), std::string::npos) << what;
    }
    const dev_mask on_gpu(*m_dev, docs);
    const double l_gpu = loss_and_grads(*m_ops, cfg, g_gpu, on_gpu.view());
    const double l_cpu = loss_and_grads(default_cpu_context(), cfg, g_cpu, docs->view());
    loss_and_grads(default_cpu_context(), cfg, g_dense);
    EXPECT_NEAR(l_gpu, l_cpu, 1e-3 * l_cpu);
    const double gmax = max_abs(g_cpu);
    ASSERT_GT(gmax, 0.0);
    testing_support::expect_close(g_gpu, g_cpu, static_cast<float>(2e-2 * gmax), 0.0f,
                                  "masked whole-model gradient");
    double dense_off = 0;
    for (std::size_t i = 0; i < g_cpu.size(); ++i)
        dense_off = std::max(dense_off, static_cast<double>(std::fabs(g_dense[i] - g_cpu[i])));
    EXPECT_GT(dense_off, 2e-2 * gmax);
}

// --dtype on the GPU (cuBLASLt's bf16, fp16 and fp8 GEMMs, kernels/cuda/lowp_linear) against
// the CPU emulation of the same dtype, one step's loss and gradient. The tolerances are
// jobs/README.md's ("Mixed precision on the GPU"), fixed before any GPU ran them: both sides
// round the same operands, so they differ by reordered fp32 sums that flip a rounding now and
// then (and fp16's attention, bf16 on the GPU).
namespace {

struct dtype_case {
    train_dtype dtype;
    fp8_scaling scaling;
    double loss_rel, grad_of_max;
};

double lowp_loss(executor& dev, const dtype_case& c, const model_config& cfg,
                 std::vector<float>& grads) {
    train_context ctx(dev, false);
    precision_config p;
    p.dtype = c.dtype;
    p.scaling = c.scaling;
    ctx.precision_state().configure(p, cfg.layers);
    return loss_and_grads(ctx, cfg, grads);
}

} // namespace

TEST_F(gpu_train_ops, each_dtype_matches_the_cpu_emulation_of_that_dtype) {
    model_config cfg = small_model();
    cfg.kv_heads = 1;
    cfg.mlp = mlp_kind::swiglu;
    cfg.ffn = 352;
    auto cpu = make_executor(device_kind::cpu);
    const dtype_case cases[] = {{train_dtype::bf16, fp8_scaling::delayed, 1e-3, 2e-2},
                                {train_dtype::fp16, fp8_scaling::delayed, 1e-3, 2e-2},
                                {train_dtype::fp8, fp8_scaling::delayed, 1e-2, 0.125},
                                {train_dtype::fp8, fp8_scaling::current, 1e-2, 0.125}};
    for (const dtype_case& c : cases) {
        const int cc = current_gpu_info().cc_major;
        if (c.dtype == train_dtype::fp8 && cc != 9) {
            std::printf("fp8 skipped: this GPU (compute capability %d.x) has no fp8 GEMMs\n", cc);
            continue;
        }
        std::vector<float> g_gpu, g_cpu;
        const double l_gpu = lowp_loss(*m_dev, c, cfg, g_gpu);
        const double l_cpu = lowp_loss(*cpu, c, cfg, g_cpu);
        const char* name = train_dtype_name(c.dtype);
        EXPECT_NEAR(l_gpu, l_cpu, c.loss_rel * l_cpu) << name;
        const double gmax = max_abs(g_cpu);
        ASSERT_GT(gmax, 0.0) << name;
        testing_support::expect_close(g_gpu, g_cpu, static_cast<float>(c.grad_of_max * gmax), 0.0f,
                                      name);
    }
}

// What a GPU case records: the GEMMs' dtype (MFU's peak), cuBLASLt, and the attention in bf16.
TEST_F(gpu_train_ops, the_gpu_dtype_is_recorded) {
    train_context ctx(*m_dev, false);
    precision_config p;
    p.dtype = train_dtype::bf16;
    ctx.precision_state().configure(p, 2);
    EXPECT_EQ(ctx.gemm_dtype(), "bf16");
    EXPECT_NE(ctx.precision().find("bf16 GEMMs through cuBLASLt"), std::string::npos);
    p.dtype = train_dtype::fp16;
    ctx.precision_state().configure(p, 2);
    EXPECT_NE(ctx.storage().find("dO bf16"), std::string::npos) << ctx.storage();
}

// fp16's static loss scale: a gradient past fp16's range once scaled overflows and is counted
// on the GPU as on the CPU (the same elements, up to those within fp32 noise of the bound).
TEST_F(gpu_train_ops, fp16_overflows_are_counted_as_on_the_cpu) {
    const model_config cfg = small_model();
    auto cpu = make_executor(device_kind::cpu);
    std::size_t counts[2] = {};
    int i = 0;
    for (executor* dev : {m_dev.get(), cpu.get()}) {
        train_context ctx(*dev, false);
        precision_config p;
        p.dtype = train_dtype::fp16;
        p.loss_scale = 1e9f; // every dy of the step times 1e9: far past 65504
        ctx.precision_state().configure(p, cfg.layers);
        std::vector<float> g;
        loss_and_grads(ctx, cfg, g);
        counts[i++] = ctx.precision_state().overflows();
    }
    EXPECT_GT(counts[1], 0u);
    // The same elements overflow but for those within fp32 noise of fp16's largest value.
    EXPECT_NEAR(static_cast<double>(counts[0]), static_cast<double>(counts[1]),
                0.01 * static_cast<double>(counts[1]));
}
