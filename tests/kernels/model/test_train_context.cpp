// train_context's progress hook (set_progress): called once before every dense GEMM, forward
// and backward, and cleared only by the owner that set it.
#include "kernels/model/train_context.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace ringscale;
namespace model = ringscale::kernels::model;

namespace {

struct gemm_operands {
    kernels::linear_shape shape{3, 4, 5};
    std::vector<float> x = std::vector<float>(12, 0.5f), w = std::vector<float>(20, 0.25f);
    std::vector<float> y = std::vector<float>(15), dy = std::vector<float>(15, 1.0f);
    std::vector<float> dx = std::vector<float>(12), dw = std::vector<float>(20);

    void fwd(model::train_context& ctx) {
        ctx.gemm_fwd(0, shape, x.data(), w.data(), nullptr, y.data());
    }
    void bwd(model::train_context& ctx) {
        ctx.gemm_bwd(0, shape, x.data(), w.data(), dy.data(), dx.data(), dw.data(), nullptr);
    }
};

} // namespace

TEST(train_context, the_progress_hook_runs_once_before_every_dense_gemm) {
    auto exec = kernels::make_executor(device_kind::cpu);
    model::train_context ctx(*exec, false);
    gemm_operands g;
    g.fwd(ctx); // nothing set: nothing called
    EXPECT_FALSE(ctx.has_progress());
    int calls = 0;
    const int owner = 0;
    ctx.set_progress(&owner, [&] { ++calls; });
    g.fwd(ctx);
    EXPECT_EQ(calls, 1);
    g.bwd(ctx);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(g.y[0], 0.5f) << "the GEMM itself still ran"; // 4 x 0.5 x 0.25
}

TEST(train_context, only_the_owner_clears_the_progress_hook) {
    auto exec = kernels::make_executor(device_kind::cpu);
    model::train_context ctx(*exec, false);
    gemm_operands g;
    int calls = 0;
    const int first = 0, second = 0;
    ctx.set_progress(&first, [&] { calls += 1; });
    ctx.set_progress(&second, [&] { calls += 10; }); // a scheme replacing another
    ctx.clear_progress(&first);                      // the replaced one going away
    g.fwd(ctx);
    EXPECT_EQ(calls, 10);
    ctx.clear_progress(&second);
    EXPECT_FALSE(ctx.has_progress());
    g.fwd(ctx);
    EXPECT_EQ(calls, 10);
}

// What a case records about its dtypes: the GEMMs' multiply dtype (MFU's peak) and where each
// tensor is stored, for every --dtype; gradients reduced in fp32 always.
TEST(train_context, the_recorded_dtypes_follow_the_precision) {
    auto exec = kernels::make_executor(device_kind::cpu);
    kernels::model::train_context ctx(*exec, false);
    EXPECT_EQ(ctx.gemm_dtype(), "fp32");
    using kernels::model::train_dtype;
    const struct {
        train_dtype t;
        const char* gemm;
        const char* attention;
    } cases[] = {
        {train_dtype::fp32, "GEMM inputs fp32 with", "dO fp32"},
        {train_dtype::bf16, "GEMM inputs bf16 with", "dO bf16"},
        {train_dtype::fp16, "GEMM inputs fp16 (output gradients loss-scaled)", "dO fp16"},
        {train_dtype::fp8, "E4M3 activations and weights, E5M2 output gradients", "dO bf16"}};
    for (const auto& c : cases) {
        kernels::model::precision_config p;
        p.dtype = c.t;
        ctx.precision_state().configure(p, 1);
        const std::string s = ctx.storage();
        EXPECT_NE(s.find(c.gemm), std::string::npos) << s;
        EXPECT_NE(s.find(c.attention), std::string::npos) << s;
        EXPECT_NE(s.find("master weights, gradients, AdamW moments and saved activations fp32"),
                  std::string::npos)
            << s;
        EXPECT_NE(s.find("gradients reduced in fp32"), std::string::npos) << s;
        EXPECT_EQ(ctx.gemm_dtype(), "fp32") << s; // the emulation multiplies in fp32
    }
}

// MFU's dtype is the one the GEMMs multiply in: --dtype on a GPU (cuBLASLt's bf16, fp16, fp8
// GEMMs), the CPU's emulation multiplies in fp32, TF32 where asked.
TEST(train_context, the_gemm_dtype_is_the_gpu_dtype_and_the_cpu_multiplies_in_fp32) {
    using kernels::gemm_math;
    using kernels::model::gemm_dtype_of;
    using kernels::model::train_dtype;
    EXPECT_EQ(gemm_dtype_of(device_kind::cuda, gemm_math::fp32, train_dtype::bf16), "bf16");
    EXPECT_EQ(gemm_dtype_of(device_kind::cuda, gemm_math::fp32, train_dtype::fp16), "fp16");
    EXPECT_EQ(gemm_dtype_of(device_kind::cuda, gemm_math::tf32, train_dtype::fp8), "fp8");
    EXPECT_EQ(gemm_dtype_of(device_kind::cuda, gemm_math::tf32, train_dtype::fp32), "tf32");
    EXPECT_EQ(gemm_dtype_of(device_kind::cuda, gemm_math::fp32, train_dtype::fp32), "fp32");
    EXPECT_EQ(gemm_dtype_of(device_kind::cpu, gemm_math::fp32, train_dtype::bf16), "fp32");
    EXPECT_EQ(gemm_dtype_of(device_kind::cpu, gemm_math::fp32, train_dtype::fp8), "fp32");
}

// A GPU's fp8 GEMMs take their scales from mixed_precision::fp8_scale with the amax they
// measured; the CPU's gemm_input measures it on the host: over steps of delayed and of
// current scaling both keep the same history and give the same scales.
TEST(train_context, device_fp8_scales_follow_the_cpu_emulations_bookkeeping) {
    for (auto scaling : {model::fp8_scaling::delayed, model::fp8_scaling::current}) {
        model::precision_config p;
        p.dtype = model::train_dtype::fp8;
        p.scaling = scaling;
        p.amax_history = 3;
        model::mixed_precision host, device;
        host.configure(p, 2);
        device.configure(p, 2);
        for (int step = 0; step < 6; ++step) {
            for (int site = 0; site < 9; ++site)
                for (auto op :
                     {model::gemm_operand::x, model::gemm_operand::w, model::gemm_operand::dy}) {
                    const float amax = 0.01f * static_cast<float>((step * 7 + site * 3) % 11 + 1) *
                                       (op == model::gemm_operand::dy ? 1e-3f : 1.0f);
                    std::vector<float> v = {amax / 2, -amax, amax / 4};
                    const float s = device.fp8_scale(site, op, amax);
                    const float* r = host.gemm_input(site, op, v.data(), v.size());
                    // The host rounded -amax with its scale: the same scale reads it back.
                    const auto f = model::fp8_format_of(op);
                    EXPECT_EQ(r[1], kernels::round_to_fp8(f, -amax * s) / s) << step << " " << site;
                }
            host.end_step(nullptr);
            device.end_step(nullptr);
            for (int site = 0; site < 9; ++site)
                EXPECT_EQ(device.delayed_scale(site, model::gemm_operand::dy),
                          host.delayed_scale(site, model::gemm_operand::dy));
        }
        if (scaling == model::fp8_scaling::delayed) { // the history moved the scale off 1
            EXPECT_NE(device.delayed_scale(0, model::gemm_operand::x), 1.0f);
        }
    }
}
