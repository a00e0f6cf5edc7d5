// train_step at np=1, 2, 4: every data-parallel variant (and FSDP with prefetch), and the
// dp x cp grid with ring, all-gather, Ulysses and hybrid attention (jobs/schemes, the code the
// attention jobs run), each through the run loop with
// validation on: step-1 gradient, parameters after 3 steps and every loss against the
// single-rank run on the same global batch. Grids: np=1 1x1; np=2 2x1 and 1x2; np=4 4x1
// and 2x2. The cp cores' declared bytes against what a counting communicator sees them send.
#include "comm/communicator.hpp"
#include "jobs/registry.hpp"
#include "jobs/schemes/data_parallel.hpp"
#include "jobs/schemes/ring_allreduce.hpp"
#include "jobs/train_problem.hpp"
#include "src/engine/run_loop.hpp"
#include "src/engine/sweep.hpp"
#include "tests/support/counting_communicator.hpp"

#include "kernels/executor.hpp"

#include <gtest/gtest.h>

using namespace ringscale;

namespace {

// Defaults with a tiny model: 2 layers of `hidden` = `heads` heads of 64, vocab 64, sequences
// of 64 tokens, `tokens` per step.
jobs::param_lists tiny_model(int hidden, int heads, int tokens) {
    jobs::param_lists l;
    for (const auto& o : jobs::find_job("train_step").options())
        l[o.name] = {o.default_value};
    l["layers"] = {"2"};
    l["hidden"] = {std::to_string(hidden)};
    l["heads"] = {std::to_string(heads)};
    l["vocab"] = {"64"};
    l["train-seq-len"] = {"64"};
    l["tokens"] = {std::to_string(tokens)};
    return l;
}

case_record run(const std::string& dp_variant, int cp, const std::string& cp_variant = "ring",
                const std::string& prefetch = "off", const comm::node_layout& nodes = {},
                const std::string& placement = "node", const std::string& docs = "",
                const std::string& ulysses_degree = "0", const jobs::param_lists& model = {}) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    launch_config cfg;
    cfg.jobs = {"train_step"};
    cfg.params = tiny_model(128, 2, 256);
    for (const auto& [k, v] : model)
        cfg.params[k] = v;
    cfg.params["bucket-mb"] = {"0.2"}; // several DDP buckets
    cfg.params["dp-variant"] = {dp_variant};
    cfg.params["cp"] = {std::to_string(cp)};
    cfg.params["cp-variant"] = {cp_variant};
    cfg.params["prefetch"] = {prefetch};
    cfg.params["cp-placement"] = {placement};
    cfg.params["cp-ulysses-degree"] = {ulysses_degree};
    if (!docs.empty())
        cfg.params["docs"] = {docs};
    cfg.warmup = 1;
    cfg.iters = 2;
    cfg.validate = validate_mode::on;
    jobs::launch_info launch;
    launch.world_size = world->size();
    launch.host_bytes_per_rank = 1ull << 30;
    launch.nodes = nodes;
    const auto cases = plan_launch(cfg, launch);
    EXPECT_EQ(cases.size(), 1u);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{*world, *world, *dev, launch, 1, true, 7};
    return run_case(cases.at(0), cfg, ctx);
}

void expect_valid(const case_record& rec) {
    ASSERT_EQ(std::get<std::string>(rec.flat().at("status")), "ok")
        << std::get<std::string>(rec.flat().at("error"));
    EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1);
    EXPECT_LE(jobs::attr_number(rec.flat(), "validate_grad_max_abs_err"),
              jobs::attr_number(rec.flat(), "validate_grad_tolerance"));
    EXPECT_GT(jobs::attr_number(rec.flat(), "validate_grad_tolerance"), 0);
    const auto& loss = rec.per_iteration.at("loss");
    ASSERT_EQ(loss.size(), 3u);
    EXPECT_LT(loss.back(), loss.front()); // training makes progress
    for (const char* k : {"param_bytes", "grad_bytes", "optimizer_bytes", "activation_bytes"})
        EXPECT_GT(rec.per_rank.at(k).at(0), 0) << k;
}

int world_size() {
    return comm::make_world(comm_kind::mpi, comm::memory_space::host)->size();
}

// The shapes people train, small: 4 query heads of 64 sharing 2 K/V heads (GQA) and a SwiGLU
// MLP 384 wide.
jobs::param_lists gqa_swiglu() {
    return {{"hidden", {"256"}},
            {"heads", {"4"}},
            {"kv-heads", {"2"}},
            {"ffn", {"384"}},
            {"mlp", {"swiglu"}}};
}

} // namespace

class train_step_dp : public ::testing::TestWithParam<const char*> {};

TEST_P(train_step_dp, matches_single_rank_run) {
    expect_valid(run(GetParam(), 1));
}

INSTANTIATE_TEST_SUITE_P(all, train_step_dp, ::testing::Values("ddp", "zero1", "fsdp"));

TEST(train_step_mpi, fsdp_with_prefetch_matches_single_rank_run) {
    expect_valid(run("fsdp", 1, "ring", "on"));
}

TEST(train_step_mpi, sharded_state_shrinks_with_ranks) {
    const auto ddp = run("ddp", 1), zero1 = run("zero1", 1), fsdp = run("fsdp", 1);
    const int p = world_size();
    const double full = ddp.per_rank.at("optimizer_bytes").at(0);
    EXPECT_NEAR(zero1.per_rank.at("optimizer_bytes").at(0), full / p, 64.0 * p);
    EXPECT_LE(fsdp.per_rank.at("param_bytes").at(0),
              ddp.per_rank.at("param_bytes").at(0) / p + 64.0 * p * 8);
}

TEST(train_step_mpi, zero1_gradients_take_no_more_than_a_shard_beyond_ddp) {
    // ZeRO-1 keeps the full local gradient and, on P > 1 ranks, its reduced shard; on one
    // rank the shard is the gradient itself, so its gradient memory equals DDP's.
    const auto ddp = run("ddp", 1), zero1 = run("zero1", 1);
    const int p = world_size();
    const double full = ddp.per_rank.at("grad_bytes").at(0);
    const double extra = p > 1 ? full / p : 0.0;
    EXPECT_NEAR(zero1.per_rank.at("grad_bytes").at(0), full + extra, 64.0 * p);
    if (p == 1) {
        EXPECT_EQ(jobs::attr_number(zero1.flat(), "comm_bytes_per_iter"), 0.0);
    }
}

class train_step_cp : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(train_step_cp, dp_by_cp_grid_matches_single_rank_run) {
    if (world_size() % 2 != 0)
        GTEST_SKIP() << "cp = 2 needs an even number of ranks";
    const auto [dp_variant, cp_variant] = GetParam();
    const auto rec = run(dp_variant, 2, cp_variant);
    expect_valid(rec);
    EXPECT_EQ(jobs::attr_number(rec.flat(), "dp"), world_size() / 2);
}

INSTANTIATE_TEST_SUITE_P(all, train_step_cp,
                         ::testing::Combine(::testing::Values("ddp", "zero1", "fsdp"),
                                            ::testing::Values("ring", "allgather", "ulysses",
                                                              "hybrid")));

// Grouped-query attention and SwiGLU under every data-parallel variant, alone (cp = 1) and with
// the ring (cp = 2): the same training as the single-rank run.
class train_step_gqa : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(train_step_gqa, gqa_and_swiglu_match_single_rank_run) {
    const auto [dp_variant, cp] = GetParam();
    if (world_size() % cp != 0)
        GTEST_SKIP() << "cp = 2 needs an even number of ranks";
    const auto rec = run(dp_variant, cp, "ring", "off", {}, "node", "", "0", gqa_swiglu());
    expect_valid(rec);
    kernels::model::model_config c; // the shape, as the case ran it
    c.layers = 2;
    c.hidden = 256;
    c.heads = 4;
    c.kv_heads = 2;
    c.ffn = 384;
    c.mlp = kernels::model::mlp_kind::swiglu;
    c.vocab = 64;
    EXPECT_EQ(jobs::attr_number(rec.flat(), "parameters"),
              static_cast<double>(kernels::model::param_layout(c).total()));
}

INSTANTIATE_TEST_SUITE_P(all, train_step_gqa,
                         ::testing::Combine(::testing::Values("ddp", "zero1", "fsdp"),
                                            ::testing::Values(1, 2)));

// The hybrid in true groups: cp = P with Ulysses groups of 2 (np=4: a ring of 2 groups of 2;
// np=2: one group, no ring), and groups of 1 (a ring of every cp rank, np=2 and 4).
TEST(train_step_hybrid, ulysses_groups_under_a_ring_match_single_rank_run) {
    const int p = world_size();
    if (p == 1)
        GTEST_SKIP() << "the hybrid needs cp > 1 ranks (np=2, 4)";
    for (const char* u : {"1", "2"}) {
        SCOPED_TRACE(std::string("--cp-ulysses-degree ") + u);
        const auto rec = run("zero1", p, "hybrid", "off", {}, "node", "", u);
        expect_valid(rec);
        EXPECT_EQ(std::get<std::string>(rec.identity.at("variant")),
                  std::string("zero1/cp-hybrid/u") + u);
    }
}

class train_step_cp_bytes : public ::testing::TestWithParam<const char*> {};

// cp = P, dp = 1: the bytes the counting communicator sees are the cp core's and DDP's ring
// all-reduce of the gradient over the world (on host memory; collectives are counted only as
// calls), so the core's figure must equal what was sent less the ring's.
namespace {
// With GQA (2 K/V heads for 4 query heads) the K/V blocks are half as wide.
void check_declared_bytes(const char* variant, bool gqa) {
    SCOPED_TRACE(gqa ? "gqa" : "mha");
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    if (gqa && std::string(variant) == "ulysses" && world->size() > 2)
        return; // Ulysses over 4 ranks needs 4 K/V heads: no grouping left at 4 query heads
    testing_support::counting_communicator counting(*world);
    const auto& job = jobs::find_job("train_step");
    auto l = tiny_model(256, 4, 128);
    l["cp"] = {std::to_string(world->size())};
    l["cp-variant"] = {variant};
    if (gqa)
        l["kv-heads"] = {"2"};
    jobs::launch_info launch;
    launch.world_size = world->size();
    launch.host_bytes_per_rank = 1ull << 30;
    const auto plans = plan_job(job, l, launch);
    ASSERT_EQ(plans.size(), 1u);
    const auto pr = jobs::read_train_problem(plans[0].values, world->size());
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{counting, *world, *dev, launch, 1, false, 3};
    auto cs = job.make_case(plans[0], ctx);
    cs->setup();
    phase_timer timer;
    counting.reset();
    cs->iterate(timer);
    std::size_t ring_floats = 0;
    const kernels::model::param_layout layout(pr.model);
    for (const auto& b : jobs::schemes::make_buckets(layout, pr.dp_set.bucket_bytes))
        ring_floats +=
            jobs::schemes::ring_allreduce_floats_sent(b.size, world->size(), world->rank());
    EXPECT_DOUBLE_EQ(pr.cp_comm_bytes_per_step(),
                     static_cast<double>(counting.bytes_sent() - ring_floats * sizeof(float)))
        << variant;
    EXPECT_DOUBLE_EQ(jobs::attr_number(cs->describe(), "comm_bytes_per_iter"),
                     pr.dp_comm_bytes_per_step() + pr.cp_comm_bytes_per_step());
    if (world->size() > 1) {
        EXPECT_GT(pr.cp_comm_bytes_per_step(), 0.0);
    }
}
} // namespace

TEST_P(train_step_cp_bytes, declared_equals_sent) {
    check_declared_bytes(GetParam(), false);
    check_declared_bytes(GetParam(), true);
}

INSTANTIATE_TEST_SUITE_P(all, train_step_cp_bytes,
                         ::testing::Values("ring", "allgather", "ulysses", "hybrid"));

// The 2 x 2 grid on (pretended) 2 nodes of 2 ranks, cp groups inside each node or across the
// nodes, nodes filled in order or round robin: the same training as the single-rank run.
TEST(train_step_grid, cp_placement_on_nodes_matches_reference) {
    if (world_size() != 4)
        GTEST_SKIP() << "needs 4 ranks (2 nodes x 2), runs at np=4";
    for (const auto& nodes :
         {comm::node_layout::blocks(2, 2), comm::node_layout::round_robin(2, 4)})
        for (const char* placement : {"node", "across"}) {
            SCOPED_TRACE(nodes.describe() + ", cp placement " + placement);
            const case_record rec = run("zero1", 2, "ring", "off", nodes, placement);
            expect_valid(rec);
            EXPECT_EQ(jobs::attr_number(rec.identity, "nodes"), 2);
            EXPECT_EQ(std::get<std::string>(rec.identity.at("cp_placement")), placement);
        }
}

// Packed documents (attention within each one; they cross the cp ranks' zigzag chunks):
// every cp core against the single-rank run with the same documents, and the documents
// change the loss (the mask is applied, not ignored).
TEST(train_step_docs, packed_documents_match_the_single_rank_run) {
    const int cp = std::min(world_size(), 2);
    const std::string docs = "8+24+20+12";
    for (const char* variant : {"ring", "allgather", "ulysses", "hybrid"})
        expect_valid(run("ddp", cp, variant, "off", {}, "node", docs));
    if (world_size() == 4) // Ulysses groups of 2 under a ring of 2
        expect_valid(run("ddp", 4, "hybrid", "off", {}, "node", docs, "2"));
    if (world_size() == 4)
        expect_valid(run("fsdp", 4, "ring", "off", {}, "node", docs));
    const auto packed = run("ddp", 1, "ring", "off", {}, "node", docs);
    const auto dense = run("ddp", 1, "ring", "off");
    EXPECT_NE(packed.per_iteration.at("loss").front(), dense.per_iteration.at("loss").front());
    EXPECT_LT(jobs::attr_number(packed.flat(), "flops_per_iter"),
              jobs::attr_number(dense.flat(), "flops_per_iter"));
}

// Each training dtype and fp8 recipe on the grids of the world size (dp = P; the cp = 2 ring
// where P is even) against the single-rank run in that dtype. fp8's current recipe takes each
// tensor's scale from its amax over the replica's cp group (jobs/train_lowp: share_current_amax)
// and its reference runs a replica's sequences per call: the same scales, so the same roundings.
class train_step_dtype : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(train_step_dtype, matches_the_single_rank_run_in_its_dtype) {
    const auto [dtype, recipe] = GetParam();
    const jobs::param_lists lowp = {{"dtype", {dtype}}, {"fp8-recipe", {recipe}}};
    expect_valid(run("ddp", 1, "ring", "off", {}, "node", "", "0", lowp));
    if (world_size() % 2 == 0)
        expect_valid(run("ddp", 2, "ring", "off", {}, "node", "", "0", lowp));
}

INSTANTIATE_TEST_SUITE_P(all, train_step_dtype,
                         ::testing::Values(std::make_tuple("bf16", "delayed"),
                                           std::make_tuple("fp16", "delayed"),
                                           std::make_tuple("fp8", "delayed"),
                                           std::make_tuple("fp8", "current")));
