// The run-time choice of compute device and what decides it before any work: --dtype per
// device, element rounding, the CPU device's own operations, the plan-time device-memory
// skip and the refusal of NCCL on a shared GPU. None of it needs a GPU.
#include "jobs/attention_common.hpp"
#include "jobs/registry.hpp"
#include "kernels/gpu.hpp"
#include "kernels/kernels.hpp"
#include "src/base/error.hpp"
#include "src/engine/device_binding.hpp"
#include "src/engine/run_loop.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace ringscale;
using kernels::elem;

TEST(attention_dtype, auto_resolves_per_device_and_wrong_types_are_refused) {
    EXPECT_EQ(jobs::resolve_attention_dtype("auto", device_kind::cpu), elem::f32);
    EXPECT_EQ(jobs::resolve_attention_dtype("auto", device_kind::cuda), elem::bf16);
    EXPECT_EQ(jobs::resolve_attention_dtype("fp16", device_kind::cuda), elem::f16);
    EXPECT_EQ(jobs::resolve_attention_dtype("float32", device_kind::cpu), elem::f32);
    // The CPU emulates bf16 and fp16 (kernels/cpu/attention_cpu.hpp).
    EXPECT_EQ(jobs::resolve_attention_dtype("bf16", device_kind::cpu), elem::bf16);
    EXPECT_EQ(jobs::resolve_attention_dtype("fp16", device_kind::cpu), elem::f16);
    EXPECT_THROW(jobs::resolve_attention_dtype("fp32", device_kind::cuda), config_error);
    // fp8 is cuDNN's fp8 attention on a GPU (its rules per case: jobs/attention_fp8.hpp).
    EXPECT_EQ(jobs::resolve_attention_dtype("fp8", device_kind::cuda), elem::e4m3);
    EXPECT_THROW(jobs::resolve_attention_dtype("fp8", device_kind::cpu), config_error);
    EXPECT_THROW(jobs::resolve_attention_dtype("fp4", device_kind::cuda), config_error);
}

TEST(elem_rounding, nearest_even_overflow_and_subnormals) {
    // bf16 keeps 8 significant bits: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> even (1).
    EXPECT_EQ(kernels::round_to(elem::bf16, 1.0f + 0x1p-8f), 1.0f);
    EXPECT_EQ(kernels::round_to(elem::bf16, 1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
    EXPECT_EQ(kernels::round_to(elem::bf16, -2.5f), -2.5f);
    // fp16: 11 significant bits, largest finite 65504, subnormals down to 2^-24.
    EXPECT_EQ(kernels::round_to(elem::f16, 1.0f + 0x1p-11f), 1.0f);
    EXPECT_EQ(kernels::round_to(elem::f16, 1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
    EXPECT_EQ(kernels::round_to(elem::f16, 65504.0f), 65504.0f);
    EXPECT_TRUE(std::isinf(kernels::round_to(elem::f16, 65520.0f)));
    EXPECT_EQ(kernels::round_to(elem::f16, 0x1p-25f), 0.0f);         // tie -> even (0)
    EXPECT_EQ(kernels::round_to(elem::f16, 3 * 0x1p-25f), 0x1p-23f); // 1.5 ulp -> 2 ulp
    EXPECT_EQ(kernels::round_to(elem::f32, 0.1f), 0.1f);
    EXPECT_TRUE(std::isnan(kernels::round_to(elem::bf16, NAN)));
}

TEST(device_choice, cpu_by_name_and_cuda_refused_without_a_gpu) {
    EXPECT_EQ(kernels::make_executor(device_kind::cpu)->kind(), device_kind::cpu);
    EXPECT_THROW(kernels::make_executor(parse_device_kind("tpu")), config_error);
    if (kernels::gpu_count() > 0)
        GTEST_SKIP() << "a GPU is visible: the refusal without one cannot be checked here";
    try {
        kernels::make_executor(device_kind::cuda);
        FAIL() << "make_executor(cuda) succeeded without a GPU";
    } catch (const error& e) { // not compiled, or compiled with no device visible
        EXPECT_TRUE(e.kind() == error_kind::config || e.kind() == error_kind::not_compiled)
            << e.what();
    }
}

TEST(cpu_device, rows_round_trip_add_and_phases) {
    const auto dev = kernels::make_executor(device_kind::cpu);
    const kernels::dev_positions index(*dev, {3, 0, 2});
    std::vector<float> src(2 * 4 * 2); // [outer 2][4 rows][2]
    for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<float>(i);
    std::vector<float> taken(2 * 3 * 2), back(src.size(), -1.0f);
    kernels::take_rows(*dev, 2 * sizeof(float), 2, 4, index.view(), src.data(), taken.data());
    EXPECT_EQ(taken[0], 6.0f);  // outer 0, row 3
    EXPECT_EQ(taken[2], 0.0f);  // outer 0, row 0
    EXPECT_EQ(taken[6], 14.0f); // outer 1, row 3
    kernels::put_rows(*dev, 2 * sizeof(float), 2, 4, index.view(), taken.data(), back.data());
    for (std::size_t o = 0; o < 2; ++o)
        for (std::size_t r : {0u, 2u, 3u})
            EXPECT_EQ(back[(o * 4 + r) * 2], src[(o * 4 + r) * 2]);
    EXPECT_EQ(back[2], -1.0f); // row 1 untouched
    std::vector<float> sum(3);
    const std::vector<float> a{1, 2, 3}, b{10, 20, 30};
    kernels::add(*dev, 3, a.data(), b.data(), sum.data());
    EXPECT_EQ(sum, (std::vector<float>{11, 22, 33}));
    // bf16 is emulated on the CPU and stored as a GPU stores it: the top half of the fp32 bits.
    std::uint16_t half[3] = {};
    kernels::convert(*dev, elem::bf16, 3, a.data(), half);
    EXPECT_EQ(half[0], 0x3f80u);
    EXPECT_EQ(half[2], 0x4040u);
    phase_timer timer;
    { kernels::phase_scope s(*dev, timer, phase::comm_wait); }
    dev->finish_iteration(timer);
    EXPECT_GE(timer.comm_wait_s(), 0.0);
    EXPECT_EQ(timer.compute_s(), 0.0);
    EXPECT_FALSE(index.view().contiguous);
    EXPECT_TRUE(kernels::dev_positions(*dev, {4, 5, 6}).view().contiguous);
}

TEST(device_memory_plan, a_case_too_large_for_the_gpu_is_skipped_with_its_need) {
    launch_config cfg;
    cfg.jobs = {"ring_attention"};
    cfg.params = {{"seq-len", {"64K", "1K"}}, {"seq-preset", {""}}, {"batch", {"1"}},
                  {"heads", {"8"}},           {"kv-heads", {"0"}},  {"head-dim", {"64"}},
                  {"causal", {"1"}},          {"pass", {"fwd"}},    {"layout", {"zigzag"}},
                  {"overlap", {"on"}},        {"dtype", {"auto"}}};
    jobs::launch_info launch;
    launch.world_size = 1;
    launch.device = device_kind::cuda;
    launch.host_bytes_per_rank = 1ull << 40;
    launch.device_bytes_per_rank = 64ull << 20; // 64 MiB
    const auto cases = plan_launch(cfg, launch);
    ASSERT_EQ(cases.size(), 2u);
    EXPECT_NE(cases[0].plan.skip_reason.find("of device memory per rank, device has 64.00 MiB"),
              std::string::npos)
        << cases[0].plan.skip_reason;
    EXPECT_TRUE(cases[1].plan.skip_reason.empty()) << cases[1].plan.skip_reason;
    EXPECT_EQ(cases[1].plan.values.text("dtype"), "bf16"); // resolved, never "auto"
}

TEST(nccl_sharing, refused_for_nccl_with_the_fix_named_and_allowed_for_staged_mpi) {
    const std::vector<std::string> shared{"GPU-a", "GPU-a"}, own{"GPU-a", "GPU-b"};
    const std::string why = nccl_sharing_problem(shared, 1, comm_kind::nccl);
    EXPECT_NE(why.find("ranks 0 and 1 share GPU GPU-a"), std::string::npos) << why;
    EXPECT_NE(why.find("--comm mpi"), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos);
    EXPECT_EQ(nccl_sharing_problem(shared, 0, comm_kind::mpi), "");
    EXPECT_EQ(nccl_sharing_problem(own, 1, comm_kind::nccl), "");
}
