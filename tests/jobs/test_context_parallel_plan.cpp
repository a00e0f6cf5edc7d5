// context_parallel's planning rules (pure, no MPI): variant names and the automatic Ulysses
// degree, one clear config_error per bad input, preset skips, the memory estimate's growth,
// and the closing comparison table.
#include "jobs/attention_accuracy.hpp"
#include "jobs/attention_common.hpp"
#include "jobs/registry.hpp"
#include "src/base/error.hpp"
#include "src/engine/sweep.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::jobs;

namespace {

param_lists base(const std::string& variant, const std::string& u = "0") {
    return {{"seq-len", {"1K"}},    {"seq-preset", {""}},   {"batch", {"1"}},
            {"heads", {"8"}},       {"kv-heads", {"0"}},    {"head-dim", {"64"}},
            {"causal", {"1"}},      {"pass", {"fwd"}},      {"layout", {"zigzag"}},
            {"variant", {variant}}, {"ulysses-degree", {u}}};
}

launch_info ranks(int p) {
    launch_info l;
    l.accuracy = accuracy_mode::off; // the schemes' own bytes
    l.world_size = p;
    l.host_bytes_per_rank = 8ull << 30;
    return l;
}

const job& cp() {
    return find_job("context_parallel");
}

// The config_error's message, or "" when planning succeeds.
std::string plan_error(const param_lists& l, int p) {
    try {
        plan_job(cp(), l, ranks(p));
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(context_parallel_plan, variant_names_and_automatic_ulysses_degree) {
    auto l = base("allgather");
    l["variant"] = {"allgather", "ulysses", "hybrid"};
    const auto cases = plan_job(cp(), l, ranks(4));
    ASSERT_EQ(cases.size(), 3u);
    EXPECT_EQ(cases[0].variant, "allgather");
    EXPECT_EQ(cases[1].variant, "ulysses");
    EXPECT_EQ(cases[2].variant, "hybrid/u2"); // largest divisor u of 4 with u*u <= 4
    EXPECT_EQ(plan_job(cp(), base("hybrid"), ranks(2)).at(0).variant, "hybrid/u1");
    EXPECT_EQ(plan_job(cp(), base("hybrid"), ranks(8)).at(0).variant, "hybrid/u2");
    auto sixteen = base("hybrid");
    sixteen["seq-len"] = {"4K"};
    EXPECT_EQ(plan_job(cp(), sixteen, ranks(16)).at(0).variant, "hybrid/u4");
    EXPECT_EQ(plan_job(cp(), base("hybrid", "4"), ranks(4)).at(0).variant, "hybrid/u4");
}

TEST(context_parallel_plan, ulysses_degree_sweep_does_not_repeat_other_variants) {
    auto l = base("allgather");
    l["variant"] = {"allgather", "hybrid"};
    l["ulysses-degree"] = {"1", "2", "0"}; // 0 resolves to 2 at P=4: a repeat
    const auto cases = plan_job(cp(), l, ranks(4));
    ASSERT_EQ(cases.size(), 3u);
    EXPECT_EQ(cases[0].variant, "allgather");
    EXPECT_EQ(cases[1].variant, "hybrid/u1");
    EXPECT_EQ(cases[2].variant, "hybrid/u2");
}

TEST(context_parallel_plan, bad_input_names_the_constraint) {
    auto l = base("ulysses");
    l["heads"] = {"6"};
    std::string e = plan_error(l, 4);
    EXPECT_NE(e.find("--heads 6 is not divisible by the 4 ranks"), std::string::npos) << e;
    l["variant"] = {"allgather"}; // all-gather has no head constraint
    EXPECT_EQ(plan_error(l, 4), "");

    l = base("ulysses");
    l["kv-heads"] = {"2"};
    e = plan_error(l, 4);
    EXPECT_NE(e.find("--kv-heads 2 is below the 4 ranks"), std::string::npos) << e;
    EXPECT_EQ(plan_error(l, 2), ""); // 2 kv-heads over 2 ranks is fine

    e = plan_error(base("hybrid", "3"), 4);
    EXPECT_NE(e.find("--ulysses-degree 3 does not divide the 4 ranks"), std::string::npos) << e;
    e = plan_error(base("hybrid", "8"), 4); // placed by node: above the node's 4 ranks
    EXPECT_NE(e.find("--ulysses-degree 8 cannot fit a node"), std::string::npos) << e;
    auto across = base("hybrid", "8");
    across["ulysses-placement"] = {"across"};
    e = plan_error(across, 4);
    EXPECT_NE(e.find("does not divide"), std::string::npos) << e;

    l = base("hybrid", "4");
    l["kv-heads"] = {"2"};
    e = plan_error(l, 4);
    EXPECT_NE(e.find("--kv-heads 2 is below --ulysses-degree 4"), std::string::npos) << e;

    l = base("hybrid", "2");
    l["heads"] = {"6"};
    l["kv-heads"] = {"3"};
    e = plan_error(l, 4);
    EXPECT_NE(e.find("--kv-heads 3 is not divisible by --ulysses-degree 2"), std::string::npos)
        << e;

    EXPECT_NE(plan_error(base("gossip"), 2).find("--variant"), std::string::npos);
    l = base("allgather");
    l["seq-len"] = {"1004"}; // not divisible by 2P = 8 for zigzag
    EXPECT_NE(plan_error(l, 4), "");
    for (const auto& msg : {plan_error(base("hybrid", "3"), 4), plan_error(l, 4)})
        EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
}

TEST(context_parallel_plan, preset_cases_that_cannot_run_are_skipped) {
    auto l = base("ulysses");
    l["seq-preset"] = {"document"};
    l["heads"] = {"6"};
    const auto cases = plan_job(cp(), l, ranks(4));
    ASSERT_EQ(cases.size(), 4u);
    for (const auto& c : cases) {
        EXPECT_TRUE(c.skippable);
        EXPECT_NE(c.skip_reason.find("--heads 6"), std::string::npos) << c.skip_reason;
    }
}

TEST(context_parallel_plan, allgather_memory_grows_with_the_sequence) {
    auto bytes = [](const std::string& variant, const std::string& seq, int p) {
        auto l = base(variant);
        l["seq-len"] = {seq};
        l["heads"] = {"32"};
        l["pass"] = {"fwd+bwd"};
        auto c = plan_job(cp(), l, ranks(p)).at(0);
        EXPECT_FALSE(c.validate_by_default); // S > 8K: no validation term
        return static_cast<double>(c.bytes_per_rank - (8u << 20));
    };
    // All-gather holds every rank's K/V: linear in S, and it hardly shrinks with more ranks,
    // while a sequence-sharded scheme's memory falls as 1/P.
    EXPECT_NEAR(bytes("allgather", "128K", 8) / bytes("allgather", "64K", 8), 2.0, 1e-9);
    EXPECT_LT(bytes("allgather", "64K", 8) / bytes("allgather", "64K", 32), 2.0);
    EXPECT_NEAR(bytes("ulysses", "64K", 8) / bytes("ulysses", "64K", 32), 4.0, 1e-9);
    EXPECT_GT(bytes("allgather", "64K", 32), 2 * bytes("ulysses", "64K", 32));
    EXPECT_GT(bytes("hybrid", "64K", 8), bytes("ulysses", "64K", 8)); // ring buffers on top
}

namespace {
launch_info on_nodes(int nodes, int per_node) {
    launch_info l = ranks(nodes * per_node);
    l.nodes = comm::node_layout::blocks(nodes, per_node);
    return l;
}
} // namespace

TEST(context_parallel_plan, hybrid_on_several_nodes_takes_a_node_per_ulysses_group) {
    // 2 nodes x 4: u = 4 (the ranks per node), not the one-node rule's 2.
    EXPECT_EQ(plan_job(cp(), base("hybrid"), on_nodes(2, 4)).at(0).variant, "hybrid/u4");
    // The heads allow 2 of the 4 (kv-heads 2): the largest u that fits them and the node.
    auto narrow = base("hybrid");
    narrow["kv-heads"] = {"2"};
    EXPECT_EQ(plan_job(cp(), narrow, on_nodes(2, 4)).at(0).variant, "hybrid/u2");
    // Placed by node, groups that tile the nodes raise no warning; u = 4 on nodes of 6 ranks
    // does not divide them, so a group spans two nodes: one warning line.
    EXPECT_EQ(plan_job(cp(), base("hybrid"), on_nodes(2, 4)).at(0).note, "");
    auto six = base("hybrid", "4");
    six["seq-len"] = {"1152"}; // divisible by 2 x 12 zigzag chunks
    const auto spans = plan_job(cp(), six, on_nodes(2, 6));
    EXPECT_NE(spans.at(0).note.find("span nodes"), std::string::npos) << spans.at(0).note;
    // Forced across: no warning, the user asked for it.
    six["ulysses-placement"] = {"across"};
    EXPECT_EQ(plan_job(cp(), six, on_nodes(2, 6)).at(0).note, "");
}

TEST(context_parallel_plan, ulysses_degree_that_cannot_fit_a_node) {
    try {
        plan_job(cp(), base("hybrid", "4"), on_nodes(2, 2));
        ADD_FAILURE() << "u = 4 on nodes of 2 ranks planned";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("--ulysses-degree 4 cannot fit a node"),
                  std::string::npos)
            << e.what();
    }
    auto across = base("hybrid", "4");
    across["ulysses-placement"] = {"across"}; // spread over the nodes: allowed
    EXPECT_EQ(plan_job(cp(), across, on_nodes(2, 2)).at(0).variant, "hybrid/u4/across");
    // One node: a degree above its ranks says so too.
    EXPECT_NE(plan_error(base("hybrid", "4"), 2).find("cannot fit a node"), std::string::npos);
}

// Options that cannot mean anything are refused (a placement across nodes on one
// node, the hybrid's options in a launch without a hybrid case); in a sweep over variants the
// hybrid's options stay out of the other variants' identities.
TEST(context_parallel_plan, hybrid_options_shape_only_the_hybrid) {
    auto across = base("hybrid", "2");
    across["ulysses-placement"] = {"across"};
    EXPECT_NE(plan_error(across, 4).find("--ulysses-placement across spreads each Ulysses group "
                                         "over nodes, but all 4 ranks run on one node"),
              std::string::npos)
        << plan_error(across, 4);
    EXPECT_EQ(plan_job(cp(), across, on_nodes(2, 2)).at(0).variant, "hybrid/u2/across");
    EXPECT_NE(plan_error(base("allgather", "2"), 4)
                  .find("shape only --variant hybrid, and this launch runs allgather"),
              std::string::npos);
    auto ulysses = base("ulysses");
    ulysses["ulysses-placement"] = {"across"};
    EXPECT_NE(plan_error(ulysses, 4).find("this launch runs ulysses"), std::string::npos);
    auto mixed = base("allgather", "2");
    mixed["variant"] = {"allgather", "hybrid"};
    const auto cases = plan_job(cp(), mixed, ranks(4));
    ASSERT_EQ(cases.size(), 2u);
    for (const case_plan& c : cases)
        EXPECT_EQ(c.values.text("ulysses-degree"), c.values.text("variant") == "hybrid" ? "2" : "0")
            << c.variant;
}

// --accuracy auto weighs the measurement at its measured speed (at S = 16K, one head, 64
// sampled rows, fwd+bwd at P = 2 it took 16-27% of a step: the estimate may not be lower), on
// the ranks its head groups keep busy; it stays off on a GPU.
TEST(context_parallel_plan, accuracy_auto_weighs_the_measurement_as_measured) {
    attention_problem pr;
    pr.seq_len = 16384;
    pr.heads = pr.kv_heads = 1;
    pr.head_dim = 64;
    pr.causal = pr.backward = true;
    const double p2 = accuracy_cost_fraction(pr, 64, 2);
    EXPECT_GE(p2, 0.27);
    EXPECT_LE(p2, 0.60);
    EXPECT_DOUBLE_EQ(accuracy_cost_fraction(pr, 64, 4), 2 * p2); // one group: one rank works
    pr.heads = pr.kv_heads = 4; // four groups over four ranks: as fast as one over one
    EXPECT_NEAR(accuracy_cost_fraction(pr, 64, 4), accuracy_cost_fraction(pr, 64, 1), 1e-12);
    param_lists l = base("allgather");
    l["seq-len"] = {"16K"};
    launch_info on_cpu = ranks(2), on_gpu = ranks(2);
    on_cpu.accuracy = on_gpu.accuracy = accuracy_mode::automatic;
    on_cpu.iterations = on_gpu.iterations = 20;
    on_gpu.device = device_kind::cuda;
    on_gpu.device_bytes_per_rank = 80ull << 30;
    EXPECT_TRUE(plan_job(cp(), l, on_cpu).at(0).measure_accuracy);
    EXPECT_FALSE(plan_job(cp(), l, on_gpu).at(0).measure_accuracy);
    on_cpu.iterations = 1; // 5% of one iteration: not worth it at 16K
    EXPECT_FALSE(plan_job(cp(), l, on_cpu).at(0).measure_accuracy);
}
