// The attention jobs on CUDA devices at np=1 and 2, as the launcher runs them: ring attention
// (every layout, overlap on and off), all-gather, Ulysses and the hybrid, forward and
// forward+backward, bf16 and fp16, over NCCL (a GPU per rank) and over MPI staged through
// pinned host memory (ranks may share a GPU); each validated against the double reference on
// the same rounded inputs. Skips, with the reason, where no GPU is visible. The attention
// kernel path is the launcher's default (--attn-kernel auto) except in the test that runs
// both sm80 and auto.
#include "jobs/registry.hpp"
#include "kernels/attention_path.hpp"
#include "tests/support/gpu_job_support.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace ringscale;
using testing_support::gpu_launch;

namespace {

struct attention_case {
    std::string job = "ring_attention", variant = "allgather", layout = "zigzag";
    std::string pass = "fwd+bwd", dtype = "bf16", overlap = "on", kv_heads = "2";
    std::map<std::string, std::string> mask; ///< --window, --docs, ... (none: dense)
};

launch_config config_of(const attention_case& c) {
    launch_config cfg;
    cfg.jobs = {c.job};
    cfg.params = {{"seq-len", {"2K"}},      {"seq-preset", {""}},       {"batch", {"1"}},
                  {"heads", {"4"}},         {"kv-heads", {c.kv_heads}}, {"head-dim", {"128"}},
                  {"causal", {"1"}},        {"pass", {c.pass}},         {"layout", {c.layout}},
                  {"dtype", {c.dtype}},     {"overlap", {c.overlap}},   {"variant", {c.variant}},
                  {"ulysses-degree", {"0"}}};
    if (c.job == "ring_attention") {
        cfg.params.erase("variant");
        cfg.params.erase("ulysses-degree");
    } else {
        cfg.params.erase("overlap");
    }
    for (const auto& [key, value] : c.mask)
        cfg.params[key] = {value};
    cfg.warmup = 1;
    cfg.iters = 3;
    cfg.validate = validate_mode::on;
    return cfg;
}

void expect_valid(gpu_launch& g, const attention_case& c) {
    const case_record rec = testing_support::run_on_gpu(g, config_of(c));
    std::string what = c.job + "/" + c.variant + " " + c.layout + " " + c.pass + " " + c.dtype +
                       " overlap " + c.overlap;
    for (const auto& [key, value] : c.mask)
        what += " --" + key + " " + value;
    EXPECT_EQ(std::get<std::string>(rec.flat().at("status")), "ok")
        << what << ": " << std::get<std::string>(rec.flat().at("error"));
    EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1) << what;
    EXPECT_EQ(std::get<std::string>(rec.flat().at("dtype")),
              c.dtype == "bf16" ? "bfloat16" : "float16")
        << what;
    // Timed on the device: every rank's step took time, its phases fit inside it, and the
    // device allocator saw the buffers.
    for (std::size_t i = 0; i < rec.time_s.size(); ++i) {
        EXPECT_GT(rec.time_s[i], 0.0) << what;
        EXPECT_LE(rec.compute_s[i] + rec.comm_wait_s[i], rec.time_s[i] * 1.05 + 1e-4) << what;
    }
    for (auto bytes : rec.peak_device_bytes)
        EXPECT_GT(bytes, 0u) << what;
}

class attention_gpu : public ::testing::TestWithParam<const char*> {};

TEST_P(attention_gpu, ring_layouts_and_overlap_match_reference) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    for (const char* layout : {"contiguous", "zigzag", "striped"}) {
        attention_case c;
        c.layout = layout;
        expect_valid(g, c);
    }
    attention_case c;
    c.overlap = "off";
    c.dtype = "fp16";
    expect_valid(g, c);
    c.pass = "fwd";
    c.kv_heads = "4";
    expect_valid(g, c);
}

TEST_P(attention_gpu, context_parallel_variants_match_reference) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    for (const char* variant : {"allgather", "ulysses", "hybrid"}) {
        attention_case c;
        c.job = "context_parallel";
        c.variant = variant;
        expect_valid(g, c);
        c.pass = "fwd";
        c.dtype = "fp16";
        expect_valid(g, c);
    }
}

// --attn-kernel sm80 and auto (sm90 on an H100/H200 built with 90a): the same jobs validate
// on either path. Set as the launcher does after binding the GPU.
TEST_P(attention_gpu, ring_and_allgather_validate_on_each_attention_path) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    for (const char* path : {"sm80", "auto"}) {
        kernels::set_attention_path(kernels::parse_attn_path(path));
        SCOPED_TRACE(std::string("--attn-kernel ") + path + " (resolved " +
                     kernels::to_string(kernels::resolve_attention_path(g.binding.gpu.index)) +
                     ")");
        attention_case c;
        expect_valid(g, c);
        c.job = "context_parallel";
        c.pass = "fwd";
        c.dtype = "fp16";
        c.kv_heads = "4";
        expect_valid(g, c);
    }
    kernels::set_attention_path(kernels::attn_path::automatic);
}

// Masks on CUDA in every scheme (the masked sm80 kernels, whatever --attn-kernel resolved
// to): a sliding window, packed documents and a block-sparse pattern with its local band,
// each validated against the reference on the same mask, in the ring's zigzag and striped
// layouts and in all-gather, Ulysses and the hybrid.
TEST_P(attention_gpu, masks_validate_in_every_scheme) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    const std::map<std::string, std::string> masks[] = {
        {{"window", "300"}},
        {{"docs", "fixed:512"}},
        {{"sparsity", "0.5"}, {"sparse-block", "128"}, {"window", "256"}}};
    for (const auto& mask : masks) {
        for (const char* layout : {"zigzag", "striped"}) {
            attention_case c;
            c.layout = layout;
            c.mask = mask;
            expect_valid(g, c);
        }
        for (const char* variant : {"allgather", "ulysses", "hybrid"}) {
            attention_case c;
            c.job = "context_parallel";
            c.variant = variant;
            c.mask = mask;
            expect_valid(g, c);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(comm, attention_gpu, ::testing::Values("nccl", "mpi"));

} // namespace
