// train_step on CUDA devices at np=1 and 2, as the launcher runs it: DDP, ZeRO-1 and FSDP
// (with and without prefetch), fp32 GEMMs and TF32, every context-parallel scheme (ring,
// all-gather, Ulysses, hybrid), over NCCL (a GPU per rank) and over MPI staged through pinned
// host memory (ranks may share a GPU); each case validated against the single-rank GPU run.
// Skips, with the reason, where no GPU is visible.
#include "jobs/registry.hpp"
#include "jobs/train_problem.hpp"
#include "kernels/gpu.hpp"
#include "tests/support/gpu_job_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace ringscale;
using testing_support::gpu_launch;

namespace {

struct train_case {
    std::string variant = "ddp", prefetch = "off", tf32 = "off", bucket_mb = "1", cp = "1";
    std::string docs; ///< --docs (empty: none)
    std::string cp_variant = "ring", cp_ulysses_degree = "0";
    std::string dtype = "auto", fp8_recipe = "delayed";
};

launch_config config_of(const train_case& c) {
    launch_config cfg;
    cfg.jobs = {"train_step"};
    for (const auto& o : jobs::train_options())
        cfg.params[o.name] = {o.default_value};
    // Small enough for seconds, large enough for several DDP buckets and FSDP units.
    cfg.params["layers"] = {"2"};
    cfg.params["hidden"] = {"256"};
    cfg.params["heads"] = {"4"};
    cfg.params["vocab"] = {"512"};
    cfg.params["train-seq-len"] = {"256"};
    cfg.params["tokens"] = {"2048"};
    cfg.params["dp-variant"] = {c.variant};
    cfg.params["prefetch"] = {c.prefetch};
    cfg.params["tf32"] = {c.tf32};
    cfg.params["bucket-mb"] = {c.bucket_mb};
    cfg.params["cp"] = {c.cp};
    cfg.params["cp-variant"] = {c.cp_variant};
    cfg.params["cp-ulysses-degree"] = {c.cp_ulysses_degree};
    if (!c.docs.empty())
        cfg.params["docs"] = {c.docs};
    cfg.params["dtype"] = {c.dtype};
    cfg.params["fp8-recipe"] = {c.fp8_recipe};
    cfg.warmup = 1;
    cfg.iters = 3;
    cfg.validate = validate_mode::on;
    return cfg;
}

void expect_valid(gpu_launch& g, const train_case& c) {
    const case_record rec = testing_support::run_on_gpu(g, config_of(c));
    const std::string what = c.variant + " prefetch " + c.prefetch + " tf32 " + c.tf32 + " cp " +
                             c.cp + " " + c.cp_variant + " u " + c.cp_ulysses_degree + " docs '" +
                             c.docs + "' dtype " + c.dtype + " " + c.fp8_recipe + " over " +
                             to_string(g.world->backend());
    EXPECT_EQ(std::get<std::string>(rec.flat().at("status")), "ok")
        << what << ": " << std::get<std::string>(rec.flat().at("error"));
    EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1) << what;
    EXPECT_EQ(jobs::attr_number(rec.flat(), "tf32"), c.tf32 == "on" ? 1 : 0) << what;
    EXPECT_NE(std::get<std::string>(rec.flat().at("precision")).find("bf16"), std::string::npos)
        << what;
    if (c.dtype != "auto") { // the GEMMs ran in the dtype: MFU against its peak
        EXPECT_EQ(std::get<std::string>(rec.flat().at("mfu_dtype")), c.dtype) << what;
    }
    // The loss is finite and falls over the run.
    const auto& loss = rec.per_iteration.at("loss");
    ASSERT_FALSE(loss.empty()) << what;
    EXPECT_TRUE(std::isfinite(loss.back())) << what;
    EXPECT_LT(loss.back(), loss.front()) << what;
    // Timed on the device: every rank's step took time, its phases fit inside it, and the
    // device allocator saw the model's state.
    for (std::size_t i = 0; i < rec.time_s.size(); ++i) {
        EXPECT_GT(rec.time_s[i], 0.0) << what;
        EXPECT_GT(rec.compute_s[i], 0.0) << what;
        EXPECT_LE(rec.compute_s[i] + rec.comm_wait_s[i], rec.time_s[i] * 1.05 + 1e-4) << what;
    }
    for (auto bytes : rec.peak_device_bytes)
        EXPECT_GT(bytes, 1u << 20) << what;
}

class train_step_gpu : public ::testing::TestWithParam<const char*> {};

TEST_P(train_step_gpu, data_parallel_variants_match_the_single_rank_gpu_run) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    for (const char* variant : {"ddp", "zero1", "fsdp"}) {
        train_case c;
        c.variant = variant;
        expect_valid(g, c);
    }
    train_case prefetch;
    prefetch.variant = "fsdp";
    prefetch.prefetch = "on";
    expect_valid(g, prefetch);
}

TEST_P(train_step_gpu, tf32_gemms_match_within_the_gpu_tolerance) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    train_case c;
    c.tf32 = "on";
    c.bucket_mb = "25";
    expect_valid(g, c);
}

// --dtype bf16|fp16|fp8 (cuBLASLt's GEMMs) against the single-rank GPU run of the same dtype,
// within jobs/train_validate.hpp's tolerances of each dtype: every data-parallel variant and
// the ring over every rank; fp8 with both recipes, on Hopper only.
TEST_P(train_step_gpu, each_dtype_matches_the_single_rank_gpu_run_of_that_dtype) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    const bool hopper = kernels::current_gpu_info().cc_major == 9;
    for (const char* dtype : {"bf16", "fp16", "fp8"}) {
        if (std::string(dtype) == "fp8" && !hopper) {
            std::printf("fp8 not run: this GPU has no fp8 GEMMs (Hopper only)\n");
            continue;
        }
        for (const char* variant : {"ddp", "zero1", "fsdp"}) {
            train_case c;
            c.dtype = dtype;
            c.variant = variant;
            expect_valid(g, c);
        }
        train_case ring;
        ring.dtype = dtype;
        ring.cp = std::to_string(g.control->size());
        expect_valid(g, ring);
        if (std::string(dtype) == "fp8") {
            ring.fp8_recipe = "current";
            expect_valid(g, ring);
        }
    }
}

// Every rank in one context-parallel group (cp = ranks): the ring core on the GPU at np=2, the
// single-rank core at np=1.
TEST_P(train_step_gpu, ring_context_parallelism_matches_the_single_rank_gpu_run) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    train_case c;
    c.cp = std::to_string(g.control->size());
    expect_valid(g, c);
    c.variant = "fsdp";
    expect_valid(g, c);
}

// Packed documents (attention within each document: the masked CUDA kernels), alone and with
// the ring across the ranks.
TEST_P(train_step_gpu, packed_documents_match_the_single_rank_gpu_run) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    train_case c;
    c.docs = "fixed:64";
    expect_valid(g, c);
    c.cp = std::to_string(g.control->size());
    expect_valid(g, c);
}

// The other context-parallel schemes, through the same code as the CPU's (jobs/schemes): every
// rank in one cp group; the hybrid as a ring of single-rank groups and as one Ulysses group.
TEST_P(train_step_gpu, every_context_parallel_scheme_matches_the_single_rank_gpu_run) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    train_case c;
    c.cp = std::to_string(g.control->size());
    for (const char* variant : {"allgather", "ulysses", "hybrid"}) {
        c.cp_variant = variant;
        expect_valid(g, c);
    }
    c.cp_ulysses_degree = c.cp; // one group of every rank: Ulysses through the hybrid's code
    expect_valid(g, c);
    c.variant = "fsdp";
    c.cp_variant = "allgather";
    expect_valid(g, c);
}

INSTANTIATE_TEST_SUITE_P(comm, train_step_gpu, ::testing::Values("nccl", "mpi"));

} // namespace
