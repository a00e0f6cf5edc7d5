// The single-rank attention core (kernels/model/attention_core.hpp) on the CPU executor against
// the CPU kernels called directly, forward and backward; the floor's reordered blocks against
// the whole attention.
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/executor.hpp"
#include "kernels/model/attention_core.hpp"
#include "kernels/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;

namespace {

std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

} // namespace

// The single-rank core, through the executor's attention kernels on the CPU (fp32 inputs),
// against the CPU kernels called directly, forward and backward.
TEST(local_attention_core, on_the_cpu_executor_matches_the_cpu_kernels) {
    const auto exec = make_executor(device_kind::cpu);
    attention_shape s;
    s.batch = 2;
    s.heads = s.kv_heads = 2;
    s.q_len = s.k_len = 48;
    s.head_dim = 64;
    s.causal = true;
    std::vector<std::int64_t> pos(48);
    std::iota(pos.begin(), pos.end(), 0);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto q = seeded(qe, 11), kv = seeded(2 * qe, 12), d_o = seeded(qe, 13);
    cpu::attention_workspace ws;
    cpu::attention_workspace_reserve(ws);
    local_attention_core core(*exec, pos);
    std::vector<float> o1(qe), o2(qe), l1(qe / 64), l2(qe / 64), dq1(qe), dq2(qe), dkv1(2 * qe),
        dkv2(2 * qe);
    phase_timer timer;
    const std::int64_t kve = attention_kv_elems(s);
    cpu::attention_fwd_init(s, o1.data(), l1.data());
    cpu::attention_fwd_cpu(s, q.data(), kv.data(), kv.data() + kve, pos.data(), pos.data(),
                           o1.data(), l1.data(), ws);
    core.forward(s, q.data(), kv.data(), o2.data(), l2.data(), timer);
    std::vector<float> delta(qe / 64);
    cpu::attention_bwd_delta(s, o1.data(), d_o.data(), delta.data());
    std::fill(dq1.begin(), dq1.end(), 0.0f);
    std::fill(dkv1.begin(), dkv1.end(), 0.0f);
    cpu::attention_bwd_cpu(s, q.data(), kv.data(), kv.data() + kve, d_o.data(), l1.data(),
                           delta.data(), pos.data(), pos.data(), dq1.data(), dkv1.data(),
                           dkv1.data() + kve, ws);
    core.backward(s, q.data(), kv.data(), o2.data(), d_o.data(), l2.data(), dq2.data(), dkv2.data(),
                  timer);
    auto worst = [](const std::vector<float>& a, const std::vector<float>& b) {
        double e = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
            e = std::max(e, static_cast<double>(std::fabs(a[i] - b[i])));
        return e;
    };
    EXPECT_LE(worst(o1, o2), 1e-6);
    EXPECT_LE(worst(l1, l2), 1e-6);
    EXPECT_LE(worst(dq1, dq2), 1e-5);
    EXPECT_LE(worst(dkv1, dkv2), 1e-5);
    EXPECT_GT(timer.compute_s(), 0.0);
}

// train_step --numerics' floor runs: with reorder_keys, the keys (and in the backward the
// queries) in 2 to 4 seeded random blocks, gathered and added back through the executor's copy
// and add kernels, give the whole attention up to fp32 rounding, and not bit for bit (the sums
// really are reordered). Grouped-query heads, so each slab's rows are gathered on their own.
TEST(local_attention_core, the_floors_blocks_match_the_whole_attention) {
    const auto exec = make_executor(device_kind::cpu);
    attention_shape s;
    s.batch = 2;
    s.heads = 4;
    s.kv_heads = 2;
    s.q_len = s.k_len = 80;
    s.head_dim = 64;
    s.causal = true;
    std::vector<std::int64_t> pos(80);
    std::iota(pos.begin(), pos.end(), 0);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const auto q = seeded(qe, 21), kv = seeded(2 * kve, 22), d_o = seeded(qe, 23);
    struct result {
        std::vector<float> o, lse, dq, dkv;
    };
    phase_timer timer;
    const auto run = [&](std::uint64_t seed) {
        local_attention_core core(*exec, pos);
        core.reorder_keys(seed);
        result r{std::vector<float>(qe), std::vector<float>(qe / 64), std::vector<float>(qe),
                 std::vector<float>(2 * kve)};
        for (int call = 0; call < 2; ++call) { // new blocks every call
            core.forward(s, q.data(), kv.data(), r.o.data(), r.lse.data(), timer);
            core.backward(s, q.data(), kv.data(), r.o.data(), d_o.data(), r.lse.data(), r.dq.data(),
                          r.dkv.data(), timer);
        }
        return r;
    };
    const result whole = run(0), blocks = run(7);
    auto worst = [](const std::vector<float>& a, const std::vector<float>& b) {
        double e = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
            e = std::max(e, static_cast<double>(std::fabs(a[i] - b[i])));
        return e;
    };
    EXPECT_LE(worst(blocks.o, whole.o), 1e-6);
    EXPECT_LE(worst(blocks.lse, whole.lse), 1e-6);
    EXPECT_LE(worst(blocks.dq, whole.dq), 1e-5);
    EXPECT_LE(worst(blocks.dkv, whole.dkv), 1e-5);
    EXPECT_GT(worst(blocks.dq, whole.dq) + worst(blocks.dkv, whole.dkv), 0.0); // reordered
}
