// Ring attention at np=1, 2, 4: every layout x causal x pass against the reference kernel
// on the same seeded inputs (through the run loop, as the launcher runs it).
#include "comm/communicator.hpp"
#include "jobs/attention_common.hpp"
#include "jobs/registry.hpp"
#include "src/engine/run_loop.hpp"

#include "kernels/executor.hpp"

#include <gtest/gtest.h>

using namespace ringscale;

namespace {

case_record run(const std::string& layout, const std::string& causal, const std::string& pass,
                const std::string& overlap, const std::string& kv_heads = "1") {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    launch_config cfg;
    cfg.jobs = {"ring_attention"};
    cfg.params = {{"seq-len", {"256"}},  {"seq-preset", {""}},     {"batch", {"2"}},
                  {"heads", {"2"}},      {"kv-heads", {kv_heads}}, {"head-dim", {"64"}},
                  {"causal", {causal}},  {"pass", {pass}},         {"layout", {layout}},
                  {"overlap", {overlap}}};
    cfg.warmup = 1;
    cfg.iters = 2;
    cfg.validate = validate_mode::on;
    jobs::launch_info launch;
    launch.world_size = world->size();
    launch.host_bytes_per_rank = 1ull << 30;
    const auto cases = plan_launch(cfg, launch);
    EXPECT_EQ(cases.size(), 1u);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{*world, *world, *dev, launch, 1, true, 7};
    return run_case(cases.at(0), cfg, ctx);
}

void expect_valid(const case_record& rec) {
    EXPECT_EQ(std::get<std::string>(rec.flat().at("status")), "ok")
        << std::get<std::string>(rec.flat().at("error"));
    EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1);
    EXPECT_LT(jobs::attr_number(rec.flat(), "max_abs_err"), 1e-4);
}

} // namespace

class ring_attention_mpi
    : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*>> {};

TEST_P(ring_attention_mpi, matches_reference) {
    const auto [layout, causal, pass] = GetParam();
    expect_valid(run(layout, causal, pass, "on"));
}

INSTANTIATE_TEST_SUITE_P(all, ring_attention_mpi,
                         ::testing::Combine(::testing::Values("contiguous", "zigzag", "striped"),
                                            ::testing::Values("0", "1"),
                                            ::testing::Values("fwd", "fwd+bwd")));

TEST(ring_attention_mpi_extra, overlap_off_and_full_heads_match_reference) {
    expect_valid(run("zigzag", "1", "fwd+bwd", "off"));
    expect_valid(run("contiguous", "1", "fwd+bwd", "on", "2")); // no GQA
}

TEST(ring_attention_mpi_extra, comm_bytes_match_the_ring) {
    const auto rec = run("zigzag", "1", "fwd", "on");
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const int p = world->size();
    // (P-1) exchanges of this rank's K and V: batch 2, kv-heads 1, S/P rows, D 64, fp32.
    const double kv_bytes = 2.0 * 2 * 1 * (256.0 / p) * 64 * 4;
    EXPECT_DOUBLE_EQ(jobs::attr_number(rec.flat(), "comm_bytes_per_iter"), (p - 1) * kv_bytes);
}

TEST(ring_attention_mpi_extra, backward_sends_nothing_on_one_rank) {
    // fwd+bwd: K, V out and their gradients home again, P-1 steps each; one rank sends nothing.
    const auto rec = run("zigzag", "1", "fwd+bwd", "on");
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const double sent = jobs::attr_number(rec.flat(), "comm_bytes_per_iter");
    if (world->size() == 1) {
        EXPECT_EQ(sent, 0.0);
    } else {
        EXPECT_GT(sent, 0.0);
    }
}

TEST(validate_attention, rejects_a_wrong_result) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    jobs::attention_problem pr;
    pr.seq_len = 64;
    pr.batch = 4; // 4 (batch, kv-head) groups: every rank at np <= 4 checks at least one
    pr.heads = 2;
    pr.kv_heads = 1;
    jobs::attention_result zeros;
    zeros.o.assign(static_cast<std::size_t>(4 * 2 * 64 * 64), 0.0f);
    const auto v = jobs::validate_attention(*world, pr, 1, zeros);
    EXPECT_TRUE(v.checked);
    EXPECT_FALSE(v.ok);
    EXPECT_GT(v.wrong, 0u);
    EXPECT_FALSE(v.detail.empty());
}
