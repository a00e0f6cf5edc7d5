// train_context's progress hook (set_progress): called once before every dense GEMM, forward
// and backward, and cleared only by the owner that set it; the recorded dtypes; fp8's scale
// bookkeeping; the numerics floor's reordered GEMM backward on the executor.
#include "kernels/model/train_context.hpp"
#include "kernels/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

namespace {

std::vector<float> seeded(std::size_t n, std::uint64_t seed) {
    std::vector<float> v(n);
    kernels::fill_uniform(v.data(), n, seed, 0);
    return v;
}

// Rows order[i] of `src` ([rows, width]) as row i.
std::vector<float> take(const float* src, const std::vector<std::size_t>& order,
                        std::size_t width) {
    std::vector<float> out(order.size() * width);
    for (std::size_t i = 0; i < order.size(); ++i)
        std::copy_n(src + order[i] * width, width, out.data() + i * width);
    return out;
}

} // namespace

// The floor's reordered GEMM backward (train_step --numerics' floor runs) through the executor's
// row kernels, against the host code it replaced: the operands rounded as the dtype reads them,
// x's and dy's rows taken in the floor's row order, linear_bwd, dx's rows put back. Bit for bit
// in fp32 and bf16, and equal to the plain backward up to the reordered sum over tokens.
TEST(train_context, the_floors_row_order_matches_the_host_gather_bit_for_bit) {
    const kernels::linear_shape s{48, 24, 40};
    const auto x = seeded(s.tokens * s.in, 1), w = seeded(s.out * s.in, 2),
               dy = seeded(s.tokens * s.out, 3);
    auto exec = kernels::make_executor(device_kind::cpu);
    for (auto dtype : {model::train_dtype::fp32, model::train_dtype::bf16}) {
        model::precision_config p;
        p.dtype = dtype;
        const auto backward = [&](std::uint64_t seed, std::vector<float>& dx,
                                  std::vector<float>& dw, std::vector<float>& db) {
            model::train_context ctx(*exec, false);
            ctx.precision_state().configure(p, 1);
            ctx.precision_state().set_floor_reorder(seed);
            dx.assign(x.size(), 0.0f);
            dw.assign(w.size(), 0.5f); // accumulated into
            db.assign(s.out, 0.25f);
            ctx.gemm_bwd(0, s, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data());
        };
        std::vector<float> dx, dw, db, plain_dx, plain_dw, plain_db;
        backward(9, dx, dw, db);
        backward(0, plain_dx, plain_dw, plain_db);
        // The host path, with the order the same seed draws first.
        model::mixed_precision twin;
        twin.configure(p, 1);
        twin.set_floor_reorder(9);
        const std::vector<std::size_t> order = twin.row_order(s.tokens);
        ASSERT_EQ(order.size(), s.tokens);
        const auto xs =
            take(twin.gemm_input(0, model::gemm_operand::x, x.data(), x.size()), order, s.in);
        const auto dys =
            take(twin.gemm_input(0, model::gemm_operand::dy, dy.data(), dy.size()), order, s.out);
        const float* wr = twin.gemm_input(0, model::gemm_operand::w, w.data(), w.size());
        std::vector<float> dxs(x.size()), want_dx(x.size()), want_dw(w.size(), 0.5f),
            want_db(s.out, 0.25f);
        kernels::linear_bwd(*exec, kernels::gemm_math::fp32, s, xs.data(), wr, dys.data(),
                            dxs.data(), want_dw.data(), want_db.data());
        for (std::size_t i = 0; i < s.tokens; ++i)
            std::copy_n(dxs.data() + i * s.in, s.in, want_dx.data() + order[i] * s.in);
        const char* name = model::train_dtype_name(dtype);
        EXPECT_EQ(dx, want_dx) << name;
        EXPECT_EQ(dw, want_dw) << name;
        EXPECT_EQ(db, want_db) << name;
        const auto close = [](const std::vector<float>& a, const std::vector<float>& b) {
            double worst = 0;
            for (std::size_t i = 0; i < a.size(); ++i)
                worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
            return worst;
        };
        EXPECT_LE(close(dx, plain_dx), 1e-5) << name; // each row's own sum, put back in place
        EXPECT_LE(close(dw, plain_dw), 1e-5) << name;
        EXPECT_LE(close(db, plain_db), 1e-5) << name;
    }
}
