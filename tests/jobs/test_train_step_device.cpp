// train_step planned for a GPU (pure, no MPI, no GPU needed): every context-parallel scheme,
// packed documents, --numerics, mixed precision and fp8's shapes against the device's rules and
// its memory estimate; and the GPU validation's tolerances.
#include "jobs/registry.hpp"
#include "jobs/train_problem.hpp"
#include "jobs/train_validate.hpp"
#include "kernels/model/transformer.hpp"
#include "kernels/random.hpp"
#include "src/base/error.hpp"
#include "src/engine/run_loop.hpp"
#include "src/engine/sweep.hpp"
#include "tests/support/thrown_by.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace ringscale;
using namespace ringscale::jobs;
using testing_support::thrown_by;

namespace {
std::vector<float> seeded(std::size_t n, std::uint64_t seed) {
    std::vector<float> v(n);
    kernels::fill_uniform(v.data(), n, seed, 0);
    return v;
}
} // namespace

namespace {
launch_config train_config(const std::string& cp, const std::string& tf32,
                           const std::string& cp_variant = "ring") {
    launch_config cfg;
    cfg.jobs = {"train_step"};
    for (const auto& o : train_options())
        cfg.params[o.name] = {o.default_value};
    cfg.params["cp"] = {cp};
    cfg.params["tf32"] = {tf32};
    cfg.params["cp-variant"] = {cp_variant};
    return cfg;
}
jobs::launch_info gpu_launch(int ranks, std::uint64_t device_bytes) {
    jobs::launch_info l;
    l.world_size = ranks;
    l.device = device_kind::cuda;
    l.comm = comm_kind::nccl;
    l.host_bytes_per_rank = 1ull << 40;
    l.device_bytes_per_rank = device_bytes;
    return l;
}
} // namespace

// Every context-parallel scheme runs on a GPU through the same code as on the CPU: each plans
// on cuda; --tf32 is refused on the CPU.
TEST(train_step_device_plan, every_cp_scheme_plans_on_cuda) {
    for (const char* variant : {"ring", "allgather", "ulysses", "hybrid"}) {
        const auto cases =
            plan_launch(train_config("2", "off", variant), gpu_launch(2, 1ull << 40));
        ASSERT_EQ(cases.size(), 1u) << variant;
        EXPECT_TRUE(cases[0].plan.skip_reason.empty()) << variant;
    }
    jobs::launch_info cpu = gpu_launch(2, 0);
    cpu.device = device_kind::cpu;
    cpu.comm = comm_kind::mpi;
    const std::string tf32 = thrown_by([&] { plan_launch(train_config("1", "on"), cpu); });
    EXPECT_NE(tf32.find("--tf32 on needs --device cuda"), std::string::npos) << tf32;
    // --profile on runs on both devices (CUDA events on a GPU).
    launch_config profiled = train_config("1", "off");
    profiled.params["profile"] = {"on"};
    EXPECT_EQ(plan_launch(profiled, gpu_launch(2, 1ull << 40)).size(), 1u);
    EXPECT_EQ(plan_launch(profiled, cpu).size(), 1u);
}

// --numerics runs on a GPU too: its same-dtype reference and floor runs (one at a time, on the
// whole batch, with the floor's reordered rows) add their device memory to the estimate, and a
// device that cannot hold them skips the case; the dtype's own GPU rules still refuse.
TEST(train_step_device_plan, numerics_plans_on_cuda_with_its_runs_in_the_estimate) {
    launch_config cfg = train_config("1", "off");
    cfg.params["numerics"] = {"5"};
    cfg.params["dtype"] = {"bf16"};
    for (int ranks : {1, 2}) {
        const auto cases = plan_launch(cfg, gpu_launch(ranks, 1ull << 40));
        ASSERT_EQ(cases.size(), 1u) << ranks;
        EXPECT_TRUE(cases[0].plan.skip_reason.empty()) << cases[0].plan.skip_reason;
    }
    const auto fits = plan_launch(cfg, gpu_launch(1, 1ull << 40));
    const jobs::train_problem pr = jobs::read_train_problem(fits[0].plan.values, 1);
    const std::uint64_t need = fits[0].plan.bytes_per_rank;
    EXPECT_EQ(need, pr.device_bytes_per_rank(fits[0].plan.validate_by_default));
    // Beyond the run's own: a single-rank run's parameters, gradients and AdamW moments and its
    // activations for the whole batch.
    jobs::train_problem plain = pr;
    plain.numerics_steps = 0;
    const double one_run =
        4.0 * (4.0 * static_cast<double>(kernels::model::param_layout(pr.model).total()) +
               static_cast<double>(kernels::model::transformer::activation_floats(
                   pr.model, {pr.sequences, pr.seq_len})));
    EXPECT_GE(static_cast<double>(need),
              static_cast<double>(plain.device_bytes_per_rank(false)) + one_run);
    const auto skipped = plan_launch(cfg, gpu_launch(1, need - 1));
    EXPECT_NE(skipped[0].plan.skip_reason.find("of device memory per rank, device has"),
              std::string::npos)
        << skipped[0].plan.skip_reason;
    cfg.params["dtype"] = {"fp8"};
    jobs::launch_info ampere = gpu_launch(1, 1ull << 40);
    ampere.gpu_cc_major = 8;
    const std::string fp8 = thrown_by([&] { plan_launch(cfg, ampere); });
    EXPECT_NE(fp8.find("--dtype fp8 on the GPU needs Hopper"), std::string::npos) << fp8;
}

// Packed documents plan on a GPU (the masked CUDA kernels passed on an H200,
// tests/gpu/RESULTS.md) as on the CPU: one case each.
TEST(train_step_device_plan, packed_documents_plan_on_cuda) {
    launch_config cfg = train_config("1", "off");
    cfg.params["docs"] = {"fixed:128"};
    const auto on_gpu = plan_launch(cfg, gpu_launch(1, 1ull << 40));
    ASSERT_EQ(on_gpu.size(), 1u);
    EXPECT_TRUE(on_gpu[0].plan.skip_reason.empty()) << on_gpu[0].plan.skip_reason;
    EXPECT_GT(on_gpu[0].plan.bytes_per_rank, 0u);
    jobs::launch_info cpu = gpu_launch(1, 0);
    cpu.device = device_kind::cpu;
    cpu.comm = comm_kind::mpi;
    EXPECT_EQ(plan_launch(cfg, cpu).size(), 1u);
}

TEST(train_step_device_plan, the_device_estimate_skips_a_case_that_cannot_fit) {
    const auto fits = plan_launch(train_config("1", "on"), gpu_launch(1, 1ull << 40));
    ASSERT_EQ(fits.size(), 1u);
    EXPECT_TRUE(fits[0].plan.skip_reason.empty()) << fits[0].plan.skip_reason;
    const std::uint64_t need = fits[0].plan.bytes_per_rank;
    // The default model (4 x 512, 4096 tokens, validated): state, activations and the
    // reference's on the device, well above its 17 MiB of fp32 parameters.
    const jobs::train_problem pr = jobs::read_train_problem(fits[0].plan.values, 1);
    EXPECT_EQ(need, pr.device_bytes_per_rank(fits[0].plan.validate_by_default));
    EXPECT_GT(need, pr.device_bytes_per_rank(false));
    EXPECT_GT(need, 5u * 4u * kernels::model::param_layout(pr.model).total());
    const auto skipped = plan_launch(train_config("1", "off"), gpu_launch(1, need - 1));
    EXPECT_NE(skipped[0].plan.skip_reason.find("of device memory per rank, device has"),
              std::string::npos)
        << skipped[0].plan.skip_reason;
}

// The GPU tolerances: a few noise-level outliers among the parameters pass, a whole unit's
// missed update, a NaN, or a halved gradient do not; the CPU check allows no outlier.
TEST(train_validate_device, allows_rare_outliers_but_not_a_missed_unit_update) {
    const double lr = 1e-3;
    jobs::training_trace want;
    want.losses = {4.0, 3.5, 3.2};
    want.first_grads = seeded(4000, 21);
    want.params = seeded(4000, 22);
    const auto dev_tol = jobs::training_tolerance::device();
    jobs::attr_map d;
    EXPECT_TRUE(jobs::compare_training(want, want, lr, dev_tol, d).ok);
    auto got = want;
    for (std::size_t i : {7u, 1999u, 3001u}) // 3 of 4000 < 0.1%: Adam sign flips
        got.params[i] += static_cast<float>(2 * lr * 3);
    EXPECT_TRUE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    EXPECT_EQ(jobs::attr_number(d, "validate_param_outliers"), 3);
    EXPECT_FALSE(jobs::compare_training(got, want, lr, d).ok); // the CPU allows none
    got = want;
    for (std::size_t i = 1000; i < 1400; ++i) // a 400-element unit missed every update
        got.params[i] += static_cast<float>(lr * 3);
    EXPECT_FALSE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    got = want;
    got.params[5] = NAN;
    EXPECT_FALSE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    got = want;
    for (auto& g : got.first_grads)
        g *= 0.5f; // averaged instead of summed over two ranks
    EXPECT_FALSE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    // A task learnt fast: the loss bound follows step 1's loss (1e-4 * 3.6), not 0.29's.
    want.losses = {3.6, 0.86, 0.29};
    got = want;
    got.losses[2] += 2.2e-4;
    EXPECT_TRUE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    EXPECT_FALSE(jobs::compare_training(got, want, lr, d).ok); // the CPU's fp32: 1e-5 of l_ref
    got.losses[2] = 0.29 + 4e-4;                               // past 1e-4 of step 1's loss
    EXPECT_FALSE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
}

// --dtype bf16|fp16|fp8 on the GPU: bf16 and fp16 plan from compute capability 8.0, fp8 on
// Hopper only; a GPU without them, or an fp8 shape cuBLASLt's fp8 GEMMs do not take, is one
// line (the launcher's exit 2) before any work.
TEST(train_step_device_plan, mixed_precision_on_cuda_plans_where_the_gpu_runs_it) {
    auto on = [](int major, int minor) {
        jobs::launch_info l = gpu_launch(1, 1ull << 40);
        l.gpu_cc_major = major;
        l.gpu_cc_minor = minor;
        return l;
    };
    for (const char* dtype : {"bf16", "fp16", "fp8"}) {
        launch_config cfg = train_config("1", "off");
        cfg.params["dtype"] = {dtype};
        const auto cases = plan_launch(cfg, on(9, 0));
        ASSERT_EQ(cases.size(), 1u) << dtype;
        EXPECT_TRUE(cases[0].plan.skip_reason.empty()) << dtype;
        const bool fp8 = std::string(dtype) == "fp8";
        const std::string why = fp8 ? thrown_by([&] { plan_launch(cfg, on(8, 0)); }) : "";
        if (fp8) {
            EXPECT_NE(why.find("--dtype fp8 on the GPU needs Hopper"), std::string::npos) << why;
            EXPECT_NE(why.find("(this GPU is 8.0)"), std::string::npos) << why;
            EXPECT_EQ(why.find('\n'), std::string::npos) << why;
        } else {
            EXPECT_EQ(plan_launch(cfg, on(8, 0)).size(), 1u) << dtype;
        }
        const std::string old = thrown_by([&] { plan_launch(cfg, on(7, 5)); });
        EXPECT_NE(old.find("compute capability 8.0 or newer (this one is 7.5)"), std::string::npos)
            << old;
    }
}

// fp8's GEMMs take cuBLASLt's fp8 form: every width and the rows a rank holds multiples of 16.
TEST(train_step_device_plan, fp8_shapes_outside_the_fp8_gemms_are_refused_with_one_line) {
    launch_config cfg = train_config("1", "off");
    cfg.params["dtype"] = {"fp8"};
    cfg.params["vocab"] = {"1000"}; // the logits GEMM's n
    jobs::launch_info l = gpu_launch(1, 1ull << 40);
    l.gpu_cc_major = 9;
    std::string why = thrown_by([&] { plan_launch(cfg, l); });
    EXPECT_NE(why.find("the logits GEMM"), std::string::npos) << why;
    EXPECT_NE(why.find("multiples of 16"), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    cfg.params["dtype"] = {"bf16"}; // bf16 takes any shape
    EXPECT_EQ(plan_launch(cfg, l).size(), 1u);
    cfg.params["dtype"] = {"fp8"};
    cfg.params["vocab"] = {"1024"};
    cfg.params["train-seq-len"] = {"264"}; // 264 rows a rank: the weight gradients' k
    cfg.params["tokens"] = {"2112"};
    why = thrown_by([&] { plan_launch(cfg, l); });
    EXPECT_NE(why.find("264 rows"), std::string::npos) << why;
}
