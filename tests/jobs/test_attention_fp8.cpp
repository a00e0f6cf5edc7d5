// --dtype fp8 for the attention jobs (jobs/attention_fp8.hpp), no GPU: each refusal (one line
// naming the problem), the plan of a case that may run (the element type recorded, E4M3's one
// byte in the estimate), the inputs as the GPU reads them, and the reference's inputs
// (fill_shard) read exactly as the upload stores them.
#include "jobs/attention_common.hpp"
#include "jobs/attention_fp8.hpp"
#include "jobs/registry.hpp"
#include "kernels/attention_path.hpp"
#include "kernels/elem.hpp"
#include "src/base/error.hpp"
#include "src/engine/sweep.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace ringscale;
using namespace ringscale::jobs;

namespace {

param_lists base() {
    return {{"seq-len", {"1K"}},    {"seq-preset", {""}}, {"batch", {"1"}},  {"heads", {"8"}},
            {"kv-heads", {"0"}},    {"head-dim", {"64"}}, {"causal", {"1"}}, {"pass", {"fwd"}},
            {"layout", {"zigzag"}}, {"overlap", {"on"}},  {"dtype", {"fp8"}}};
}

launch_info hopper(int cc_major) {
    launch_info l;
    l.world_size = 2;
    l.host_bytes_per_rank = 8ull << 30;
    l.device = device_kind::cuda;
    l.device_bytes_per_rank = 1ull << 40;
    l.gpu_cc_major = cc_major;
    return l;
}

std::string refusal(const param_lists& l, const launch_info& launch) {
    try {
        plan_job(find_job("ring_attention"), l, launch);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

class attention_fp8 : public ::testing::Test {
  protected:
    void SetUp() override { kernels::set_attention_path(kernels::attn_path::cudnn); }
    void TearDown() override { kernels::set_attention_path(kernels::attn_path::automatic); }
};

} // namespace

TEST_F(attention_fp8, every_refusal_is_one_line_naming_the_problem) {
    fp8_attention_request ok;
    ok.cc_major = 9;
    EXPECT_EQ(fp8_attention_problem(ok), "");
    ok.backward = true; // head_dim 128: cuDNN's fp8 backward runs
    EXPECT_EQ(fp8_attention_problem(ok), "");
    const std::pair<fp8_attention_request, const char*> rows[] = {
        {{device_kind::cpu, kernels::attn_path::cudnn, false, false, false, -1, 0},
         "it needs --device cuda"},
        {{device_kind::cuda, kernels::attn_path::automatic, false, false, false, 9, 0},
         "--attn-kernel auto"},
        {{device_kind::cuda, kernels::attn_path::sm90, false, false, false, 9, 0},
         "--attn-kernel sm90"},
        {{device_kind::cuda, kernels::attn_path::cudnn, true, false, false, 9, 0, 64},
         "--pass fwd+bwd: cuDNN's fp8 backward on Hopper takes --head-dim 128, not 64"},
        {{device_kind::cuda, kernels::attn_path::cudnn, false, true, false, 9, 0}, "--merge dtype"},
        {{device_kind::cuda, kernels::attn_path::cudnn, false, false, true, 9, 0}, "--accuracy on"},
        {{device_kind::cuda, kernels::attn_path::cudnn, false, false, false, 8, 6},
         "compute capability 9.0 or newer (Hopper), this GPU is 8.6"}};
    for (const auto& [r, want] : rows) {
        const std::string why = fp8_attention_problem(r);
        EXPECT_NE(why.find(want), std::string::npos) << why;
        EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    }
    fp8_attention_request unknown_gpu; // before the GPU is bound: nothing to say about it
    EXPECT_EQ(fp8_attention_problem(unknown_gpu), "");
}

TEST_F(attention_fp8, a_case_plans_on_hopper_and_is_refused_below_it) {
    const auto cases = plan_job(find_job("ring_attention"), base(), hopper(9));
    ASSERT_EQ(cases.size(), 1u);
    const attention_problem pr = read_attention_problem(cases[0].values);
    EXPECT_EQ(pr.type, kernels::elem::e4m3);
    const attr_map a = attention_attrs(pr);
    EXPECT_EQ(std::get<std::string>(a.at("dtype")), "float8_e4m3");
    EXPECT_EQ(std::get<std::string>(a.at("mfu_dtype")), "fp8"); // the fp8 peak's name
    auto bf16 = base();
    bf16["dtype"] = {"bf16"};
    const auto wide = plan_job(find_job("ring_attention"), bf16, hopper(9));
    EXPECT_LT(cases[0].bytes_per_rank, wide[0].bytes_per_rank); // one byte per input element
    EXPECT_NE(refusal(base(), hopper(8)).find("compute capability 9.0"), std::string::npos);
    auto both = base();
    both["pass"] = {"fwd", "fwd+bwd"};
    both["head-dim"] = {"128"};
    EXPECT_EQ(plan_job(find_job("ring_attention"), both, hopper(9)).size(), 2u);
    both["head-dim"] = {"64"};
    EXPECT_NE(refusal(both, hopper(9)).find("--head-dim 128"), std::string::npos);
    kernels::set_attention_path(kernels::attn_path::sm80);
    EXPECT_NE(refusal(base(), hopper(9)).find("--attn-kernel cudnn"), std::string::npos);
    launch_info cpu = hopper(0);
    cpu.device = device_kind::cpu;
    EXPECT_NE(refusal(base(), cpu).find("--device cuda"), std::string::npos);
}

TEST_F(attention_fp8, inputs_are_read_as_e4m3_at_their_scale) {
    const float s = 448.0f / 2.0f; // amax 2
    EXPECT_EQ(fp8_as_read(2.0f, s), 2.0f);
    EXPECT_EQ(fp8_as_read(-2.0f, s), -2.0f);
    // 1.03 * 224 = 230.72 lies between E4M3's 224 and 240 (spacing 16): 224, read as 1.
    EXPECT_EQ(fp8_as_read(1.03f, s), 1.0f);
    EXPECT_EQ(amax_of(std::vector<float>{0.5f, -3.0f, 2.0f}.data(), 3), 3.0f);
    // fill_shard's values (the reference's) are what upload_as stores: s·x is E4M3 again.
    attention_problem pr =
        read_attention_problem(plan_job(find_job("ring_attention"), base(), hopper(9))[0].values);
    pr.fp8_scale = {100.0f, 150.0f, 300.0f};
    const std::vector<std::int64_t> pos = {0, 5, 9};
    std::vector<float> q(static_cast<std::size_t>(pr.heads * 3 * pr.head_dim));
    fill_shard(tensor_id::q, 7, pr, 0, pr.heads, pos, q.data());
    for (const float x : q) {
        const float stored = x * pr.fp8_scale[0]; // E4M3's value up to fp32's rounding of x
        EXPECT_NEAR(kernels::round_to(kernels::elem::e4m3, stored), stored,
                    1e-6f * std::fabs(stored))
            << x;
        EXPECT_LE(std::fabs(stored), 448.0f);
    }
    EXPECT_FLOAT_EQ(pr.local_shape(2).descale_v, 1 / 300.0f);
}
