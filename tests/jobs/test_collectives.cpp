#include "jobs/collectives_ops.hpp"
#include "jobs/collectives_scope.hpp"
#include "jobs/registry.hpp"
#include "src/base/error.hpp"
#include "src/engine/sweep.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::jobs;

namespace {
param_lists lists(const std::string& op, const std::string& lo, const std::string& hi,
                  const std::string& f = "2") {
    return {{"op", {op}},
            {"min-bytes", {lo}},
            {"max-bytes", {hi}},
            {"step-factor", {f}},
            {"root", {"0"}}};
}
launch_info world(int p) {
    launch_info l;
    l.world_size = p;
    l.host_bytes_per_rank = 1ull << 30;
    return l;
}
param_lists with_inplace(param_lists l, std::vector<std::string> places) {
    l["inplace"] = std::move(places);
    return l;
}
launch_info nccl_world(int p) {
    launch_info l = world(p);
    l.device = device_kind::cuda;
    l.comm = comm_kind::nccl;
    return l;
}
/// The operations `--op all` runs: the six blocking ones.
std::size_t ops_in_all() {
    std::size_t n = 0;
    for (const auto& op : all_ops())
        n += op.in_all ? 1 : 0;
    return n;
}
} // namespace

TEST(collectives_plan, sizes_like_nccl_tests) {
    const auto& j = find_job("collectives");
    auto cases = plan_job(j, lists("allreduce", "1K", "16K", "4"), world(2));
    ASSERT_EQ(cases.size(), 3u); // 1K, 4K, 16K
    EXPECT_EQ(cases[2].values.text("requested_bytes"), "16384");
    EXPECT_EQ(cases[2].bytes_per_rank, 2u * 16384u);
    EXPECT_EQ(ops_in_all(), 6u);
    const auto every = plan_job(j, lists("all", "1K", "1K"), world(4));
    EXPECT_EQ(every.size(), ops_in_all());
    for (const auto& c : every)
        EXPECT_NE(c.variant[0], 'i') << c.variant << ": a nonblocking form is named, not in all";
    // The nonblocking forms size as their blocking ones.
    for (const char* op : {"allreduce", "allgather", "reduce_scatter"}) {
        const auto a = plan_job(j, lists(op, "64K", "64K"), world(4));
        const auto b = plan_job(j, lists(std::string("i") + op, "64K", "64K"), world(4));
        ASSERT_EQ(b.size(), 1u) << op;
        EXPECT_EQ(b[0].bytes_per_rank, a[0].bytes_per_rank) << op;
        EXPECT_DOUBLE_EQ(find_op(std::string("i") + op).busbw_factor(4),
                         find_op(op).busbw_factor(4));
    }
}

TEST(collectives_plan, bad_input) {
    const auto& j = find_job("collectives");
    EXPECT_THROW(plan_job(j, lists("allreduce", "2K", "1K"), world(2)), config_error);
    EXPECT_THROW(plan_job(j, lists("allreduce", "1K", "2K", "1"), world(2)), config_error);
    EXPECT_THROW(plan_job(j, lists("allreduce", "0", "2K"), world(2)), config_error);
    EXPECT_THROW(plan_job(j, lists("allreduce", "-5", "2K"), world(2)), config_error);
    EXPECT_THROW(plan_job(j, lists("gossip", "1K", "2K"), world(2)), config_error);
    auto l = lists("broadcast", "1K", "2K");
    l["root"] = {"4"};
    EXPECT_THROW(plan_job(j, l, world(4)), config_error);
}

TEST(collectives_plan, tiny_messages_are_skipped_not_failed) {
    const auto& j = find_job("collectives");
    auto cases = plan_job(j, lists("allgather", "8", "8"), world(4)); // 2 floats over 4 ranks
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_TRUE(cases[0].skippable);
    EXPECT_FALSE(cases[0].skip_reason.empty());
}

TEST(collectives_ops, busbw_factors) {
    EXPECT_DOUBLE_EQ(find_op("allreduce").busbw_factor(4), 1.5);
    EXPECT_DOUBLE_EQ(find_op("allgather").busbw_factor(4), 0.75);
    EXPECT_DOUBLE_EQ(find_op("reduce_scatter").busbw_factor(8), 0.875);
    EXPECT_DOUBLE_EQ(find_op("alltoall").busbw_factor(2), 0.5);
    EXPECT_DOUBLE_EQ(find_op("sendrecv").busbw_factor(4), 1.0);
}

TEST(collectives_ops, checks_catch_wrong_elements) {
    // A correct allgather output at P=3 passes; one corrupted element is counted.
    const auto& op = find_op("allgather");
    const auto sz = op.sizes(3 * 4 * 16, 3);
    ASSERT_EQ(sz.count, 16u);
    std::vector<float> out(sz.recv_count);
    for (int q = 0; q < 3; ++q)
        for (std::size_t i = 0; i < sz.count; ++i)
            out[q * sz.count + i] = collective_value(q, i);
    EXPECT_EQ(count_wrong_all(op, 1, 3, out.data(), sz, {}), 0u);
    out[20] += 1;
    EXPECT_EQ(count_wrong_all(op, 1, 3, out.data(), sz, {}), 1u);
    // Checked in pieces (as a device buffer is read back), the same element is found.
    EXPECT_EQ(op.count_wrong(1, 3, out.data(), 0, 20, sz, {}), 0u);
    EXPECT_EQ(op.count_wrong(1, 3, out.data() + 20, 20, 28, sz, {}), 1u);
    const auto& ar = find_op("allreduce");
    const auto asz = ar.sizes(64, 2);
    std::vector<float> zero(asz.recv_count, 0.0f);
    EXPECT_GT(count_wrong_all(ar, 0, 2, zero.data(), asz, {}), 0u);
}

TEST(collectives_ops, values_are_exact_small_integers) {
    for (int r = 0; r < 5; ++r)
        for (std::size_t i = 0; i < 3000; i += 7) {
            const float v = collective_value(r, i);
            EXPECT_EQ(v, static_cast<float>(static_cast<int>(v)));
            EXPECT_LE(std::abs(v), 50.0f);
        }
}

TEST(collectives_plan, inplace_sweeps_both_placements_side_by_side) {
    const auto& j = find_job("collectives");
    auto cases =
        plan_job(j, with_inplace(lists("allreduce", "1K", "4K", "4"), {"0", "1"}), world(2));
    ASSERT_EQ(cases.size(), 4u); // 1K out, 1K in, 4K out, 4K in
    EXPECT_EQ(cases[0].values.text("inplace"), "0");
    EXPECT_EQ(cases[1].values.text("inplace"), "1");
    EXPECT_EQ(cases[1].values.text("requested_bytes"), "1024");
    EXPECT_EQ(cases[3].values.text("requested_bytes"), "4096");
    // Out of place by default, recorded as a parameter (part of the case's identity).
    auto plain = plan_job(j, lists("allreduce", "1K", "1K"), world(2));
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_EQ(plain[0].values.text("inplace"), "0");
    EXPECT_THROW(plan_job(j, with_inplace(lists("allreduce", "1K", "1K"), {"2"}), world(2)),
                 config_error);
}

TEST(collectives_plan, inplace_needs_one_buffer) {
    // Memory per rank: out of place send + receive, in place the larger of the two.
    const auto& j = find_job("collectives");
    const int p = 4;
    for (const char* op : {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast"}) {
        auto c = plan_job(j, with_inplace(lists(op, "64K", "64K"), {"0", "1"}), world(p));
        ASSERT_EQ(c.size(), 2u) << op;
        const auto sz = find_op(op).sizes(65536, p);
        EXPECT_EQ(c[0].bytes_per_rank, (sz.send_count + sz.recv_count) * 4) << op;
        EXPECT_EQ(c[1].bytes_per_rank, std::max(sz.send_count, sz.recv_count) * 4) << op;
        EXPECT_LT(c[1].bytes_per_rank, c[0].bytes_per_rank) << op;
    }
}

TEST(collectives_plan, no_inplace_form_is_skipped_in_a_sweep_and_refused_alone) {
    const auto& j = find_job("collectives");
    auto sweep = plan_job(j, with_inplace(lists("all", "1K", "1K"), {"0", "1"}), world(2));
    ASSERT_EQ(sweep.size(), 2 * ops_in_all());
    int skipped = 0;
    for (const auto& c : sweep)
        if (!c.skip_reason.empty()) {
            ++skipped;
            EXPECT_EQ(c.variant, "sendrecv");
            EXPECT_EQ(c.values.text("inplace"), "1");
        }
    EXPECT_EQ(skipped, 1);
    try {
        plan_job(j, with_inplace(lists("sendrecv", "1K", "4K"), {"1"}), world(2));
        FAIL() << "in-place sendrecv alone was not refused";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("--inplace 1: send/recv has no in-place form"),
                  std::string::npos)
            << e.what();
    }
    // NCCL: no in-place all-to-all; MPI has one (MPI_IN_PLACE).
    auto two_ops = with_inplace(lists("alltoall", "1K", "1K"), {"1"});
    two_ops["op"] = {"alltoall", "allreduce"};
    auto nccl = plan_job(j, two_ops, nccl_world(2));
    ASSERT_EQ(nccl.size(), 2u);
    EXPECT_NE(nccl[0].skip_reason.find("NCCL has no in-place all-to-all"), std::string::npos);
    EXPECT_TRUE(nccl[1].skip_reason.empty());
    EXPECT_THROW(plan_job(j, with_inplace(lists("alltoall", "1K", "1K"), {"1"}), nccl_world(2)),
                 config_error);
    auto mpi = plan_job(j, with_inplace(lists("alltoall", "1K", "1K"), {"1"}), world(2));
    EXPECT_TRUE(mpi.at(0).skip_reason.empty());
}

TEST(collectives_ops, inplace_layout_follows_nccl) {
    // all-gather: the input is the rank's block of the output; reduce-scatter: the output is
    // the rank's block of the input; the others use the buffer's start.
    const int p = 3;
    const auto ag = find_op("allgather").sizes(3 * 4 * 16, p);
    EXPECT_EQ(ag.inplace_count, ag.recv_count);
    EXPECT_EQ(in_place_input_offset(ag, 2), 2 * ag.count);
    EXPECT_EQ(in_place_output_offset(ag, 2), 0u);
    const auto rs = find_op("reduce_scatter").sizes(3 * 4 * 16, p);
    EXPECT_EQ(rs.inplace_count, rs.send_count);
    EXPECT_EQ(in_place_input_offset(rs, 2), 0u);
    EXPECT_EQ(in_place_output_offset(rs, 2), 2 * rs.count);
    const auto a2a = find_op("alltoall").sizes(3 * 4 * 16, p);
    EXPECT_EQ(in_place_input_offset(a2a, 1) + in_place_output_offset(a2a, 1), 0u);
    EXPECT_TRUE(has_input(find_op("broadcast"), 1, 1));
    EXPECT_FALSE(has_input(find_op("broadcast"), 0, 1));
    EXPECT_NE(find_op("sendrecv").no_in_place, nullptr);
}

TEST(collectives_plan, scope_sizes_and_refusals) {
    const auto& j = find_job("collectives");
    auto l = lists("allreduce", "1K", "1K");
    l["scope"] = {"world", "intra", "inter"};
    launch_info two_by_two = world(4);
    two_by_two.nodes = comm::node_layout::blocks(2, 2);
    const auto cases = plan_job(j, l, two_by_two);
    ASSERT_EQ(cases.size(), 3u);
    EXPECT_EQ(cases[1].values.text("scope"), "intra");
    EXPECT_EQ(cases[2].values.text("scope"), "inter");
    const collective_scope intra = plan_scope("intra", two_by_two.nodes, 4);
    EXPECT_EQ(intra.ranks, 2);
    EXPECT_EQ(intra.groups, 2);
    const collective_scope inter = plan_scope("inter", comm::node_layout::blocks(4, 2), 8);
    EXPECT_EQ(inter.ranks, 4);
    EXPECT_EQ(inter.groups, 1);
    EXPECT_EQ(plan_scope("world", {}, 4).ranks, 4);
    // inter on one node, intra on uneven nodes, a root outside the scope.
    l["scope"] = {"inter"};
    EXPECT_THROW(plan_job(j, l, world(2)), config_error);
    launch_info uneven = world(3);
    uneven.nodes = comm::layout_of_hosts({0, 0, 1});
    l["scope"] = {"intra"};
    EXPECT_THROW(plan_job(j, l, uneven), config_error);
    l["op"] = {"broadcast"};
    l["root"] = {"2"};
    EXPECT_THROW(plan_job(j, l, two_by_two), config_error);
}

TEST(collectives_plan, sendrecv_shift_resolves_node_and_refuses_what_has_no_peer) {
    const auto& j = find_job("collectives");
    launch_info two_by_two = world(4);
    two_by_two.nodes = comm::node_layout::blocks(2, 2);
    const collective_scope all = plan_scope("world", two_by_two.nodes, 4);
    EXPECT_EQ(plan_shift("node", two_by_two.nodes, 4, all), 2);
    EXPECT_EQ(plan_shift("3", two_by_two.nodes, 4, all), 3);
    EXPECT_EQ(plan_shift("1", {}, 1, plan_scope("world", {}, 1)), 1);
    // The shift enters a sendrecv case's identity and label only when it is not the ring's 1.
    auto l = lists("sendrecv", "1K", "1K");
    l["shift"] = {"node"};
    auto cases = plan_job(j, l, two_by_two);
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0].values.integer("shift"), 2);
    EXPECT_EQ(cases[0].variant, "sendrecv/shift2");
    l["shift"] = {"1"};
    cases = plan_job(j, l, two_by_two);
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_FALSE(cases[0].values.has("shift"));
    EXPECT_EQ(cases[0].variant, "sendrecv");
    // No peer at that distance, node on one node or on uneven nodes, node inside a node, a
    // shift with no sendrecv to take it.
    for (const char* bad : {"0", "4", "-1", "x"})
        EXPECT_THROW(plan_shift(bad, two_by_two.nodes, 4, all), config_error) << bad;
    EXPECT_THROW(plan_shift("node", {}, 4, plan_scope("world", {}, 4)), config_error);
    const comm::node_layout uneven = comm::layout_of_hosts({0, 0, 1});
    EXPECT_THROW(plan_shift("node", uneven, 3, plan_scope("world", uneven, 3)), config_error);
    EXPECT_THROW(plan_shift("node", two_by_two.nodes, 4, plan_scope("intra", two_by_two.nodes, 4)),
                 config_error);
    l = lists("allreduce", "1K", "1K");
    l["shift"] = {"2"};
    EXPECT_THROW(plan_job(j, l, two_by_two), config_error);
}
