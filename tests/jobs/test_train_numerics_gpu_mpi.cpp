// train_step --numerics on CUDA devices at np=1 and 2, as the launcher runs it: the run on the
// GPU in bf16 (cuBLASLt GEMMs), the same-dtype reference and the floor's reordered runs on the
// GPU too, the fp64 reference on the host. Every correct configuration (DDP at np=1; DDP at
// dp=2 and the cp=2 ring at np=2) is "the same training" over 20 steps and within its dtype's
// budget against fp64; the planted defects of jobs/train_faults.hpp (a cp label shifted at the
// shard boundary, the loss normalised by the local shard, DDP's first bucket never
// all-reduced) are flagged at step 1 with the quantity that moves first, as on the CPU
// (test_train_numerics_mpi). The model and floor are that test's: 1 block of 2 heads of 64,
// vocab 32, 4 sequences of 16 tokens, 32 floor runs. Over NCCL (a GPU per rank) and MPI staged
// through pinned host memory; skips, with the reason, where no GPU is visible.
#include "analysis/comparisons/numerics.hpp"
#include "jobs/registry.hpp"
#include "jobs/train_faults.hpp"
#include "jobs/train_problem.hpp"
#include "tests/jobs/numerics_case.hpp"
#include "tests/support/gpu_job_support.hpp"

#include <gtest/gtest.h>

#include <string>

#if !RINGSCALE_FAULT_HOOKS // the planted defects: every test build has them (jobs/CMakeLists.txt)
#error "built without RINGSCALE_FAULT_HOOKS: configure with BUILD_TESTING on"
#endif

using namespace ringscale;
using testing_support::gpu_launch;

namespace {

struct config {
    const char* dp_variant;
    int cp;
};

constexpr int steps = 20;

analysis::numerics_verdict judged(gpu_launch& g, const config& c, const jobs::train_faults& f) {
    launch_config cfg = test_jobs::numerics_case(c.dp_variant, c.cp, "ring", "bf16", steps, 32);
    cfg.warmup = 0;
    cfg.iters = 1;
    cfg.validate = validate_mode::on;
    jobs::set_faults(f);
    const case_record rec = testing_support::run_on_gpu(g, cfg);
    jobs::set_faults({});
    const std::string what = std::string(c.dp_variant) + " cp=" + std::to_string(c.cp) + " over " +
                             to_string(g.world->backend());
    EXPECT_EQ(rec.numerics.count("loss"), 1u)
        << what << ": " << std::get<std::string>(rec.flat().at("error"));
    EXPECT_EQ(rec.numerics.count("fp64_budget_grad_rel"), 1u) << what << ": no budget stored";
    const analysis::numerics_verdict v = analysis::judge_numerics(rec.numerics, 2.0);
    const bool planted = f.cp_label_shift || f.local_loss || f.skip_bucket_allreduce;
    if (!planted) {
        EXPECT_EQ(std::get<std::string>(rec.flat().at("status")), "ok")
            << what << ": " << std::get<std::string>(rec.flat().at("error"));
        EXPECT_EQ(v.kind, analysis::numerics_kind::same) << what << ": " << v.text();
        EXPECT_LE(v.budget_ratio, 1.0) << what << ": " << v.text();
    }
    return v;
}

class train_numerics_gpu : public ::testing::TestWithParam<const char*> {};

TEST_P(train_numerics_gpu, correct_configurations_are_the_same_training) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    judged(g, {"ddp", 1}, {});
    if (g.world->size() == 2)
        judged(g, {"ddp", 2}, {});
}

TEST_P(train_numerics_gpu, planted_defects_are_flagged_at_step_one) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    if (g.world->size() == 1)
        GTEST_SKIP() << "one rank has no shard boundary, local shard or all-reduce to break";
    jobs::train_faults shift, local, bucket;
    shift.cp_label_shift = true;
    local.local_loss = true;
    bucket.skip_bucket_allreduce = true;
    auto v = judged(g, {"ddp", 2}, shift);
    EXPECT_EQ(v.step, 1) << v.text();
    EXPECT_EQ(v.quantity, "loss") << v.text();
    v = judged(g, {"ddp", 1}, local);
    EXPECT_EQ(v.step, 1) << v.text();
    EXPECT_EQ(v.quantity, "loss") << v.text();
    v = judged(g, {"ddp", 1}, bucket);
    EXPECT_EQ(v.step, 1) << v.text();
    EXPECT_EQ(v.quantity, "grad_norm") << v.text();
}

INSTANTIATE_TEST_SUITE_P(comms, train_numerics_gpu, ::testing::Values("nccl", "mpi"));

} // namespace
