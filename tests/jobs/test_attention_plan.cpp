// Planning rules of the attention jobs (pure, no MPI) and the validation's power to fail.
#include "jobs/attention_common.hpp"
#include "jobs/registry.hpp"
#include "kernels/attention_path.hpp"
#include "src/base/error.hpp"
#include "src/engine/sweep.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::jobs;

namespace {
param_lists base() {
    return {{"seq-len", {"1K"}},    {"seq-preset", {""}}, {"batch", {"1"}},  {"heads", {"8"}},
            {"kv-heads", {"0"}},    {"head-dim", {"64"}}, {"causal", {"1"}}, {"pass", {"fwd"}},
            {"layout", {"zigzag"}}, {"overlap", {"on"}}};
}
launch_info ranks(int p) {
    launch_info l;
    l.world_size = p;
    l.host_bytes_per_rank = 8ull << 30;
    return l;
}
} // namespace

TEST(attention_plan, sweeps_and_flops) {
    auto l = base();
    l["layout"] = {"contiguous", "zigzag", "striped"};
    l["pass"] = {"fwd", "fwd+bwd"};
    const auto cases = plan_job(find_job("ring_attention"), l, ranks(4));
    ASSERT_EQ(cases.size(), 6u);
    EXPECT_EQ(cases[0].values.text("pass"), "fwd");
    EXPECT_EQ(cases[1].values.text("layout"), "zigzag"); // later names vary fastest
    EXPECT_EQ(cases[3].values.text("pass"), "fwd+bwd");
    EXPECT_EQ(cases[3].variant, "ring/contiguous");
    const auto pr = read_attention_problem(cases[3].values);
    EXPECT_EQ(pr.kv_heads, 8);
    // causal fwd: 4*B*S^2*H*D/2, and fwd+bwd = 3.5 x fwd
    EXPECT_DOUBLE_EQ(pr.flops(), 3.5 * 0.5 * 4.0 * 1024.0 * 1024.0 * 8 * 64);
}

TEST(attention_plan, bad_input_is_refused) {
    const auto& j = find_job("ring_attention");
    auto l = base();
    l["seq-len"] = {"1004"}; // not divisible by 2P = 8 for zigzag
    EXPECT_THROW(plan_job(j, l, ranks(4)), config_error);
    l["layout"] = {"contiguous"};
    l["seq-len"] = {"1002"}; // not divisible by 4
    EXPECT_THROW(plan_job(j, l, ranks(4)), config_error);
    l = base();
    l["kv-heads"] = {"3"};
    EXPECT_THROW(plan_job(j, l, ranks(2)), config_error);
    l = base();
    l["head-dim"] = {"96"};
    EXPECT_THROW(plan_job(j, l, ranks(2)), config_error);
    l = base();
    l["seq-len"] = {"0"};
    EXPECT_THROW(plan_job(j, l, ranks(2)), config_error);
    l = base();
    l["heads"] = {"-8"};
    EXPECT_THROW(plan_job(j, l, ranks(2)), config_error);
    l = base();
    l["pass"] = {"bwd"};
    EXPECT_THROW(plan_job(j, l, ranks(2)), config_error);
    l = base();
    l["seq-len"] = {"4M"}; // the estimate the launcher's preflight refuses (run_loop tests)
    l["pass"] = {"fwd+bwd"};
    EXPECT_GT(plan_job(j, l, ranks(1)).at(0).bytes_per_rank, 8ull << 30);
}

TEST(attention_plan, preset_cases_that_cannot_run_are_skipped) {
    auto l = base();
    l["seq-preset"] = {"medium"}; // 32K, 49K, 64K, 98K, 128K
    const auto cases = plan_job(find_job("ring_attention"), l, ranks(3));
    ASSERT_EQ(cases.size(), 5u);
    // 49K = 50176 = 2^10 * 49 is not divisible by 2*3 = 6 ... neither is any power of two.
    for (const auto& c : cases) {
        EXPECT_TRUE(c.skippable);
        EXPECT_FALSE(c.skip_reason.empty()) << c.values.text("seq-len");
    }
    EXPECT_THROW(
        [&] {
            auto bad = base();
            bad["seq-preset"] = {"gigantic"};
            plan_job(find_job("ring_attention"), bad, ranks(2));
        }(),
        config_error);
}

TEST(attention_plan, weak_scaling_rules) {
    using kernels::layout;
    EXPECT_EQ(weak_seq_len(256, "memory", layout::zigzag, 4), 1024);
    // work: 256*sqrt(P) to the nearest multiple of the chunks (2P zigzag, P otherwise)
    EXPECT_EQ(weak_seq_len(256, "work", layout::zigzag, 1), 256);
    EXPECT_EQ(weak_seq_len(256, "work", layout::zigzag, 2), 364);     // 362.04 -> 91*4
    EXPECT_EQ(weak_seq_len(256, "work", layout::contiguous, 2), 362); // 181*2
    EXPECT_EQ(weak_seq_len(256, "work", layout::zigzag, 3), 444);     // 443.4 -> 74*6
    EXPECT_EQ(weak_seq_len(256, "work", layout::zigzag, 4), 512);
    EXPECT_EQ(weak_seq_len(1, "work", layout::zigzag, 8), 16); // at least one multiple
    auto l = base();
    l["seq-len-per-rank"] = {"256"};
    l["seq-rule"] = {"memory", "work"};
    const auto cases = plan_job(find_job("ring_attention"), l, ranks(2));
    ASSERT_EQ(cases.size(), 2u);
    EXPECT_EQ(cases[0].values.text("seq-len"), "512");
    EXPECT_EQ(cases[0].values.text("scaling"), "weak");
    EXPECT_EQ(cases[1].values.text("seq-len"), "364");
    EXPECT_EQ(read_attention_problem(cases[1].values).seq_len, 364);
    // Without --seq-len-per-rank the rule is not part of the case.
    auto strong = base();
    strong["seq-rule"] = {"memory"};
    EXPECT_FALSE(
        plan_job(find_job("ring_attention"), strong, ranks(2)).at(0).values.has("seq-rule"));
    l["seq-rule"] = {"flat"};
    EXPECT_THROW(plan_job(find_job("ring_attention"), l, ranks(2)), config_error);
    l["seq-rule"] = {"memory"};
    l["seq-len-per-rank"] = {"3"}; // S = 6 is not divisible by 2P = 4 (zigzag)
    EXPECT_THROW(plan_job(find_job("ring_attention"), l, ranks(2)), config_error);
    l["seq-len-per-rank"] = {"256"};
    l["seq-preset"] = {"document"};
    EXPECT_THROW(plan_job(find_job("context_parallel"), l, ranks(2)), config_error);
}

TEST(attention_data, shards_are_rows_of_the_global_tensor) {
    attention_problem pr;
    pr.seq_len = 16;
    pr.batch = 2;
    pr.heads = 2;
    pr.kv_heads = 1;
    std::vector<std::int64_t> all(16);
    for (int i = 0; i < 16; ++i)
        all[i] = i;
    std::vector<float> global(2 * 2 * 16 * 64), shard(2 * 2 * 2 * 64);
    fill_shard(tensor_id::q, 3, pr, 0, 2, all, global.data());
    const std::vector<std::int64_t> pos = {5, 11};
    fill_shard(tensor_id::q, 3, pr, 0, 2, pos, shard.data());
    for (int bh = 0; bh < 4; ++bh)
        for (int i = 0; i < 2; ++i)
            for (int d = 0; d < 64; ++d)
                EXPECT_EQ(shard[(bh * 2 + i) * 64 + d], global[(bh * 16 + pos[i]) * 64 + d]);
}

// The mask options sweep and enter the identity (the block pattern only with --sparsity);
// FLOPs come from the exact visible pairs; on cuda the same cases plan (the masked CUDA kernels
// passed on an H200, tests/gpu/RESULTS.md), the mask's device arrays in the memory estimate.
TEST(attention_plan, masks_sweep_and_count_flops_exactly) {
    auto l = base();
    l["window"] = {"128", "256"};
    l["sparsity"] = {"0.5"};
    l["sparse-block"] = {"64"};
    const auto cases = plan_job(find_job("ring_attention"), l, ranks(2));
    ASSERT_EQ(cases.size(), 2u);
    EXPECT_EQ(cases[1].values.text("window"), "256");
    EXPECT_TRUE(cases[0].values.has("sparse-pattern"));
    const auto pr = read_attention_problem(cases[0].values);
    ASSERT_TRUE(pr.mask);
    EXPECT_GT(pr.mask_pairs, 0);
    EXPECT_LT(pr.mask_pairs, 1024 * 128);
    EXPECT_DOUBLE_EQ(pr.flops(), 4.0 * 8 * 64 * static_cast<double>(pr.mask_pairs));
    EXPECT_GT(pr.dense_flops() / pr.flops(), 8.0); // window 128 of 1K causal, half the blocks
    auto plain = base();
    const auto dense = plan_job(find_job("ring_attention"), plain, ranks(2));
    EXPECT_FALSE(dense[0].values.has("sparse-pattern")); // no mask: the identity as before
    EXPECT_FALSE(dense[0].values.has("window"));
    launch_info cuda = ranks(2);
    cuda.device = device_kind::cuda;
    cuda.device_bytes_per_rank = 1ull << 40;
    l["dtype"] = {"bf16"};
    const auto on_gpu = plan_job(find_job("ring_attention"), l, cuda);
    ASSERT_EQ(on_gpu.size(), 2u);
    const auto gpr = read_attention_problem(on_gpu[0].values);
    ASSERT_TRUE(gpr.mask);
    EXPECT_EQ(mask_device_bytes(gpr), gpr.mask->keep().size()); // no documents: the pairs only
    EXPECT_GT(gpr.mask->keep().size(), 0u);
    auto unmasked = l; // the same cases without the mask: the estimate differs by its arrays
    for (const char* k : {"window", "sparsity", "sparse-block"})
        unmasked.erase(k);
    const auto dense_gpu = plan_job(find_job("ring_attention"), unmasked, cuda);
    ASSERT_FALSE(read_attention_problem(dense_gpu[0].values).mask);
    EXPECT_EQ(on_gpu[0].bytes_per_rank, dense_gpu[0].bytes_per_rank + mask_device_bytes(gpr));
    l.erase("sparsity");
    l.erase("sparse-block");
    l["docs"] = {"fixed:256"};
    const auto docs = plan_job(find_job("ring_attention"), l, cuda);
    const auto dpr = read_attention_problem(docs[0].values);
    EXPECT_EQ(mask_device_bytes(dpr), 5 * sizeof(std::int64_t)); // 4 documents + the end
}

// A masked case on cuda runs the sm80 kernels unless --attn-kernel is cudnn (the sm90 kernels
// take no mask): its record says so and why; unmasked cases and the CPU add nothing.
TEST(attention_plan, a_masked_cuda_case_records_the_sm80_path) {
    attr_map a;
    add_masked_attn_kernel(a, true, device_kind::cuda);
    ASSERT_EQ(a.count("attn_kernel"), 1u);
    EXPECT_EQ(std::get<std::string>(a.at("attn_kernel")), "sm80");
    ASSERT_EQ(a.count("attn_kernel_note"), 1u);
    EXPECT_NE(std::get<std::string>(a.at("attn_kernel_note")).find("mask"), std::string::npos);
    // Under cudnn the launch's path stands: cuDNN takes windows and documents.
    kernels::set_attention_path(kernels::attn_path::cudnn);
    attr_map d;
    add_masked_attn_kernel(d, true, device_kind::cuda);
    kernels::set_attention_path(kernels::attn_path::automatic);
    EXPECT_TRUE(d.empty());
    attr_map b, c;
    add_masked_attn_kernel(b, false, device_kind::cuda);
    add_masked_attn_kernel(c, true, device_kind::cpu);
    EXPECT_TRUE(b.empty());
    EXPECT_TRUE(c.empty());
}
