// context_parallel at np=1, 2, 4: every variant x causal x pass against the reference kernel
// on the seeded inputs ring attention uses (through the run loop, as the launcher runs it);
// hybrid at every Ulysses degree u that divides P (np=1: u=1; np=2: u=1, 2; np=4: u=1, 2,
// 4); the Ulysses exchange's row placement; and each case's declared comm bytes against
// the bytes a counting communicator sees it send.
#include "comm/communicator.hpp"
#include "jobs/attention_common.hpp"
#include "jobs/registry.hpp"
#include "jobs/schemes/ulysses_exchange.hpp"
#include "kernels/layout.hpp"
#include "src/engine/run_loop.hpp"
#include "src/engine/sweep.hpp"
#include "tests/support/counting_communicator.hpp"

#include "kernels/executor.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>

using namespace ringscale;
using ringscale::testing_support::counting_communicator;

namespace {

struct cp_case {
    std::string variant = "allgather", causal = "1", pass = "fwd", layout = "zigzag";
    std::string u = "0", kv_heads = "4";
    std::string placement = "node";
    comm::node_layout nodes; ///< as if on these nodes (empty: one node)
};

jobs::param_lists lists_of(const cp_case& c) {
    return {{"seq-len", {"256"}},
            {"seq-preset", {""}},
            {"batch", {"2"}},
            {"heads", {"4"}},
            {"kv-heads", {c.kv_heads}},
            {"head-dim", {"64"}},
            {"causal", {c.causal}},
            {"pass", {c.pass}},
            {"layout", {c.layout}},
            {"overlap", {"on"}},
            {"variant", {c.variant}},
            // The hybrid's own options: another variant refuses them.
            {"ulysses-degree", {c.variant == "hybrid" ? c.u : "0"}},
            {"ulysses-placement", {c.variant == "hybrid" ? c.placement : "node"}}};
}

jobs::launch_info launch_of(const comm::communicator& world) {
    jobs::launch_info launch;
    launch.world_size = world.size();
    launch.host_bytes_per_rank = 1ull << 30;
    return launch;
}

case_record run(const cp_case& c) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    launch_config cfg;
    cfg.jobs = {"context_parallel"};
    cfg.params = lists_of(c);
    cfg.warmup = 1;
    cfg.iters = 2;
    cfg.validate = validate_mode::on;
    auto launch = launch_of(*world);
    launch.nodes = c.nodes;
    const auto cases = plan_launch(cfg, launch);
    EXPECT_EQ(cases.size(), 1u);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{*world, *world, *dev, launch, 1, true, 7};
    return run_case(cases.at(0), cfg, ctx);
}

void expect_valid(const cp_case& c) {
    const auto rec = run(c);
    const std::string what = c.variant + " u=" + c.u + " causal=" + c.causal + " " + c.pass + " " +
                             c.layout + " kv-heads=" + c.kv_heads + " " + c.placement + " on " +
                             c.nodes.describe();
    EXPECT_EQ(std::get<std::string>(rec.flat().at("status")), "ok")
        << what << ": " << std::get<std::string>(rec.flat().at("error"));
    EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1) << what;
    EXPECT_LT(jobs::attr_number(rec.flat(), "max_abs_err"), 1e-4) << what;
}

int world_size() {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    return world->size();
}

// Every Ulysses degree the hybrid can run with on this many ranks (kv-heads 4).
std::vector<std::string> hybrid_degrees() {
    std::vector<std::string> out;
    for (int u = 1; u <= world_size(); ++u)
        if (world_size() % u == 0 && 4 % u == 0)
            out.push_back(std::to_string(u));
    return out;
}

} // namespace

class context_parallel_mpi
    : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*>> {};

TEST_P(context_parallel_mpi, matches_reference) {
    const auto [variant, causal, pass] = GetParam();
    cp_case c;
    c.variant = variant;
    c.causal = causal;
    c.pass = pass;
    if (c.variant == "allgather") {
        c.kv_heads = "2"; // grouped-query attention
        expect_valid(c);
    } else if (c.variant == "ulysses") {
        expect_valid(c);
    } else {
        for (const auto& u : hybrid_degrees()) {
            c.u = u;
            expect_valid(c);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(all, context_parallel_mpi,
                         ::testing::Combine(::testing::Values("allgather", "ulysses", "hybrid"),
                                            ::testing::Values("0", "1"),
                                            ::testing::Values("fwd", "fwd+bwd")));

TEST(context_parallel_mpi_extra, other_layouts_and_gqa_match_reference) {
    cp_case c;
    c.pass = "fwd+bwd";
    for (const char* layout : {"contiguous", "striped"}) {
        c.layout = layout;
        c.variant = "allgather";
        expect_valid(c);
        c.variant = "ulysses";
        expect_valid(c);
        c.variant = "hybrid";
        c.u = hybrid_degrees().back() == "4" ? "2" : "1"; // a ring of Ulysses groups at np=4
        expect_valid(c);
    }
    if (world_size() <= 2) { // GQA under Ulysses: kv-heads 2 still divisible by P
        c = cp_case();
        c.variant = "ulysses";
        c.kv_heads = "2";
        c.pass = "fwd+bwd";
        expect_valid(c);
    }
}

// The hybrid placed on (pretended) nodes: Ulysses groups inside each node or spread across
// them, with nodes filled in order or round robin; every placement matches the reference and
// the identity records the topology.
TEST(context_parallel_mpi_extra, hybrid_on_nodes_in_every_placement_matches_reference) {
    if (world_size() != 4)
        GTEST_SKIP() << "needs 4 ranks (2 nodes x 2), runs at np=4";
    cp_case c;
    c.variant = "hybrid";
    c.pass = "fwd+bwd";
    for (const auto& nodes :
         {comm::node_layout::blocks(2, 2), comm::node_layout::round_robin(2, 4)})
        for (const char* placement : {"node", "across"}) {
            c.nodes = nodes;
            c.placement = placement;
            expect_valid(c);
            const auto rec = run(c);
            EXPECT_EQ(jobs::attr_number(rec.identity, "nodes"), 2);
            EXPECT_EQ(jobs::attr_number(rec.identity, "ranks_per_node"), 2);
            EXPECT_EQ(jobs::attr_number(rec.derived, "ulysses_degree"), 2); // auto: a node
        }
}

// Rows land where they belong: head h, global position s of tensor [B, H, S, D] holds the
// value 1000*h + s + 0.25*b in every element, so any misplaced row is visible.
TEST(ulysses_exchange, places_rows_in_group_order_and_back) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const int p = world->size(), me = world->rank();
    const std::int64_t batch = 2, heads = 4 * p, s = 8 * p, d = 3;
    std::vector<std::vector<std::int64_t>> pos;
    for (int r = 0; r < p; ++r)
        pos.push_back(kernels::layout_positions(kernels::layout::zigzag, s, p, r));
    const auto dev = kernels::make_executor(device_kind::cpu);
    const auto lay = jobs::schemes::make_ulysses_layout(*world, *dev, batch, d, pos);
    const std::int64_t n = s / p, hp = heads / p;
    auto value = [](std::int64_t b, std::int64_t h, std::int64_t at) {
        return static_cast<float>(1000 * h + at) + 0.25f * static_cast<float>(b);
    };
    std::vector<float> seq(static_cast<std::size_t>(batch * heads * n * d));
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t t = 0; t < n; ++t)
                for (std::int64_t e = 0; e < d; ++e)
                    seq[static_cast<std::size_t>(((b * heads + h) * n + t) * d + e)] =
                        value(b, h, pos[static_cast<std::size_t>(me)][static_cast<std::size_t>(t)]);
    std::vector<float> by_head(seq.size()), back(seq.size(), -1.0f);
    jobs::schemes::ulysses_scratch scratch;
    phase_timer timer;
    jobs::schemes::ulysses_to_heads(lay, {{seq.data(), by_head.data(), heads}}, scratch, timer);
    std::int64_t wrong = 0;
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t h = 0; h < hp; ++h)
            for (std::int64_t at = 0; at < s; ++at) // the whole sequence, ascending
                wrong += by_head[static_cast<std::size_t>(((b * hp + h) * s + at) * d)] !=
                         value(b, me * hp + h, at);
    EXPECT_EQ(wrong, 0);
    jobs::schemes::ulysses_to_sequence(lay, {{by_head.data(), back.data(), heads}}, scratch, timer);
    EXPECT_EQ(back, seq);
}

// Each scheme's fp32 error against the fp64 reference on sampled rows (--accuracy on) stays
// within a stated bound of the single-rank computation's: at most 4x it plus 1e-6 (fp32's
// rounding summed in another order over P blocks).
TEST(context_parallel_mpi_extra, each_scheme_fp32_error_near_the_single_rank_error) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    for (const std::string v : {"ring", "allgather", "ulysses", "hybrid"}) {
        cp_case c;
        c.variant = v == "ring" ? "allgather" : v;
        c.u = hybrid_degrees().size() > 2 ? "2" : "1";
        c.pass = "fwd+bwd";
        launch_config cfg;
        cfg.jobs = {v == "ring" ? "ring_attention" : "context_parallel"};
        cfg.params = lists_of(c);
        cfg.iters = 1;
        cfg.validate = validate_mode::off;
        auto launch = launch_of(*world);
        launch.accuracy = accuracy_mode::on;
        launch.accuracy_sample = 16;
        const auto cases = plan_launch(cfg, launch);
        ASSERT_EQ(cases.size(), 1u) << v;
        ASSERT_TRUE(cases[0].plan.measure_accuracy) << v;
        // The live table names what the error depends on: fp32 merged in fp32, uniform inputs.
        std::map<std::string, std::string> shown;
        for (const auto& m : jobs::attention_shape_metrics(cases[0].plan))
            shown[m.name] = m.text;
        EXPECT_EQ(shown["dtype"], "fp32") << v;
        EXPECT_EQ(shown["merge"], "fp32") << v;
        EXPECT_EQ(shown["inputs"], "uniform") << v;
        const auto dev = kernels::make_executor(device_kind::cpu);
        jobs::run_context ctx{*world, *world, *dev, launch, 1, false, 11};
        const auto flat = run_case(cases.at(0), cfg, ctx).flat();
        EXPECT_EQ(jobs::attr_number(flat, "acc_query_rows"), 16) << v;
        for (const char* t : {"o", "lse", "dq", "dk", "dv"}) {
            const double dist = jobs::attr_number(flat, std::string("acc_") + t + "_max_rel");
            const double single =
                jobs::attr_number(flat, std::string("acc_single_") + t + "_max_rel");
            EXPECT_LE(single, 1e-5) << v << " " << t; // fp32 on one rank
            EXPECT_LE(dist, 4 * single + 1e-6) << v << " " << t << ": single " << single;
            EXPECT_GT(dist, 0.0) << v << " " << t; // measured, not a default
        }
    }
}

class context_parallel_bytes
    : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

// The figure each case declares is what it sends: a counting communicator (sub-communicators
// from split() count too) runs one iteration.
TEST_P(context_parallel_bytes, declared_equals_sent) {
    const auto [variant, pass] = GetParam();
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    counting_communicator counting(*world);
    const std::string v = variant;
    const bool ring = v == "ring";
    cp_case c;
    c.variant = ring ? "allgather" : v;
    c.u = hybrid_degrees().size() > 2 ? "2" : "1";
    c.pass = pass;
    const auto& job = jobs::find_job(ring ? "ring_attention" : "context_parallel");
    const auto plans = plan_job(job, lists_of(c), launch_of(*world));
    ASSERT_EQ(plans.size(), 1u);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{counting, *world, *dev, launch_of(*world), 1, false, 3};
    auto cs = job.make_case(plans[0], ctx);
    cs->setup();
    phase_timer timer;
    counting.reset();
    cs->iterate(timer);
    const double declared = jobs::attr_number(cs->describe(), "comm_bytes_per_iter");
    EXPECT_DOUBLE_EQ(declared, static_cast<double>(counting.bytes_sent()))
        << plans[0].variant << " " << pass;
    EXPECT_EQ(counting.uncounted_calls(), 0u);
    if (world->size() > 1) {
        EXPECT_GT(declared, 0.0);
    }
}

INSTANTIATE_TEST_SUITE_P(all, context_parallel_bytes,
                         ::testing::Combine(::testing::Values("ring", "allgather", "ulysses",
                                                              "hybrid"),
                                            ::testing::Values("fwd", "fwd+bwd")));
