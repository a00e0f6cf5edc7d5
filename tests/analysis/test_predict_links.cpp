// How a node's ranks share its links to other nodes (analysis/predict/links.hpp): synthetic
// link tests on 2 nodes x 1 rank and 2 nodes x 2 ranks, made on one link per node (two ranks
// sending across at once get half of it each), give back the planted link figures and the
// sharing (node_links = 1); the schemes whose ranks send across nodes at once are then priced
// with it (a hybrid's ring across Ulysses groups, MPI's all-gather), those with one flow per
// node are not (a plain ring); and a hardware profile with a NIC per rank shares nothing.
// Shared flows that run slower than their share by a planted factor growing with the bytes
// per flow give that factor back (the congestion curve) and price 4 nodes with it.
#include "analysis/predict/calibrate.hpp"
#include "analysis/predict/hardware.hpp"
#include "analysis/predict/links.hpp"
#include "analysis/reading/reader.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <gtest/gtest.h>

using namespace ringscale::analysis;
using namespace ringscale::analysis::predict;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

const double alpha = 10e-6, beta = 2e9; // one node link: latency per step, bytes/s

/// A world-scope collective on `nodes` x `per_node` ranks, timed as one link per node carries
/// it: an every-rank op moves (g - r) / g of each rank's buffer off the node, r flows on the
/// one link; a sendrecv ring one flow per node.
/// Planted congestion of shared flows (links.hpp congestion_factor): none up to 256 KiB per
/// flow, 1.5x at 1 MiB, 2x from 4 MiB.
double planted_congestion(double flow_bytes) {
    return flow_bytes <= (256 << 10) ? 1.0 : flow_bytes <= (1 << 20) ? 1.5 : 2.0;
}

/// A sendrecv to rank + `shift` (the job's --shift): with shift = per_node every rank of a node
/// sends its whole buffer across at once, per_node flows on the link, congested as above.
fixture_case link_test(const std::string& op, int nodes, int per_node, std::int64_t bytes,
                       bool congested = false, int shift = 1) {
    const int g = nodes * per_node;
    fixture_case f;
    f.job = "collectives";
    f.variant = shift == 1 ? op : op + "/shift" + std::to_string(shift);
    f.world_size = g;
    f.text_params = {{"device", "cpu"}, {"comm", "mpi"}, {"op", op}, {"scope", "world"}};
    f.int_params = {{"requested_bytes", bytes}, {"nodes", nodes}, {"ranks_per_node", per_node}};
    if (shift != 1)
        f.int_params.emplace_back("shift", shift);
    f.float_params = {{"bytes", static_cast<double>(bytes)}};
    const double flow_bytes = static_cast<double>(bytes) * (g - per_node) / g;
    double congestion = congested && per_node > 1 ? planted_congestion(flow_bytes) : 1.0;
    if (op[0] == 'i') // the nonblocking form: half the excess
        congestion = 1 + (congestion - 1) / 2;
    const int flows = shift == per_node ? per_node : 1;
    const double shared = flows > 1 && congested ? planted_congestion(bytes) : 1.0;
    f.base_time_s = op == "sendrecv" ? alpha + bytes * flows / beta * shared
                                     : (g - 1) * alpha + flow_bytes * per_node / beta * congestion;
    f.noise = 0.005;
    f.seed = static_cast<std::uint64_t>(bytes * 7 + g + op.size());
    return f;
}

calibration calibrate_links(bool with_single_rank_test, bool congested = false) {
    const std::string dir =
        ringscale::test_fixture::fixture_dir(congested               ? "predict_links_congested"
                                             : with_single_rank_test ? "predict_links"
                                                                     : "predict_links_2x2");
    for (int per_node : {1, 2}) {
        if (per_node == 1 && !with_single_rank_test)
            continue;
        fixture_file file;
        for (const char* op : {"allgather", "alltoall", "sendrecv", "iallgather"}) {
            if (op[0] == 'i' && !congested)
                continue;
            for (std::int64_t bytes = 65536; bytes <= (16 << 20); bytes *= 4)
                file.cases.push_back(link_test(op, 2, per_node, bytes, congested));
        }
        write_fixture_file(dir + "/link_2x" + std::to_string(per_node) + ".h5", file);
    }
    const result_set rs = load_results({dir}, true);
    const calibration_set set = gather_calibration(pool_cases(rs.cases));
    std::vector<double> cy, ly;
    observation_medians(set, cy, ly);
    return fit_calibration(set, cy, ly);
}

/// Communication-bound figures: compute next to free, the inside of a node free.
figures comm_bound(const calibration& cal) {
    figures f = cal.for_device("none");
    f.compute = {1e-18, 1e-18, 1e-18, 0};
    f.links[0] = {0, 1e18};
    f.per_op[0].clear();
    return f;
}

target attention(const std::string& job, const std::string& variant, int nodes) {
    target t;
    t.job = job;
    t.variant = variant;
    t.identity = {{"seq_len", "4096"},  {"heads", "8"},         {"kv_heads", "8"},
                  {"layout", "zigzag"}, {"causal", "1"},        {"device", "cuda"},
                  {"pass", "fwd"},      {"ulysses_degree", "2"}};
    t.where = {2 * nodes, nodes, 2};
    return t;
}

} // namespace

TEST(analysis_predict_links, link_tests_at_1_and_2_ranks_per_node_recover_the_sharing) {
    const calibration cal = calibrate_links(true);
    EXPECT_NEAR(cal.node_links, 1, 0.05);
    for (coll op : {coll::allgather, coll::alltoall, coll::sendrecv}) {
        const link_figures lf = cal.per_op[1].at(op);
        EXPECT_NEAR(lf.beta_bps, beta, 0.05 * beta) << to_string(op);
        EXPECT_NEAR(lf.alpha_s, alpha, 0.1 * alpha) << to_string(op);
    }
    // Without the test at 1 rank per node nothing tells sharing from a slower link: none.
    EXPECT_EQ(calibrate_links(false).node_links, 0);
}

TEST(analysis_predict_links, concurrent_flows_across_nodes_are_priced_on_the_shared_link) {
    const figures f = comm_bound(calibrate_links(true));
    figures own = f; // the same link figures, a link per rank
    own.node_links = 0;
    // MPI's all-gather on 4 nodes x 2: each rank's 6/8 off-node share, two flows a link.
    target gather;
    gather.job = "collectives";
    gather.variant = "allgather";
    gather.identity = {{"op", "allgather"}, {"scope", "world"}, {"requested_bytes", "16777216"}};
    gather.where = {8, 4, 2};
    const double bytes = 16 << 20;
    EXPECT_NEAR(predict_target(gather, f).time.total(), 7 * alpha + bytes * 6 / 8 * 2 / beta,
                0.05 * predict_target(gather, f).time.total());
    // A hybrid u=2's ring crosses nodes from both ranks of a node at once: twice the transfer
    // time of a link per rank; a plain ring's one flow per node is not shared.
    const step_prediction hybrid = predict_target(attention("context_parallel", "hybrid", 4), f);
    ASSERT_TRUE(hybrid.ok()) << hybrid.refusal;
    const step_prediction hybrid_own =
        predict_target(attention("context_parallel", "hybrid", 4), own);
    EXPECT_NEAR(hybrid.time.beta[1], 2 * hybrid_own.time.beta[1], 1e-3 * hybrid.time.beta[1]);
    const step_prediction ring = predict_target(attention("ring_attention", "ring", 4), f);
    ASSERT_TRUE(ring.ok()) << ring.refusal;
    EXPECT_DOUBLE_EQ(ring.time.beta[1],
                     predict_target(attention("ring_attention", "ring", 4), own).time.beta[1]);
    // One node: nothing crosses, nothing changes.
    EXPECT_DOUBLE_EQ(predict_target(attention("context_parallel", "hybrid", 1), f).time.total(),
                     predict_target(attention("context_parallel", "hybrid", 1), own).time.total());
}

TEST(analysis_predict_links, hardware_profiles_state_the_nics_per_node) {
    EXPECT_EQ(profile_figures(builtin_h100()).node_links, 8); // a NIC per GPU
    EXPECT_DOUBLE_EQ(link_share(8, profile_figures(builtin_h100())), 1);
    hardware_profile h = parse_hardware(profile_text(builtin_h100()), "h100 copy");
    EXPECT_EQ(h.nics_per_node, 8);
    std::string text = profile_text(builtin_h100());
    text = text.substr(0, text.find("nics_per_node")); // optional: one per rank
    EXPECT_EQ(parse_hardware(text, "no nics").nics_per_node, 8);
    text += "nics_per_node = 2\n";
    const figures two = profile_figures(parse_hardware(text, "two nics"));
    EXPECT_DOUBLE_EQ(link_share(8, two), 4);
    EXPECT_THROW(parse_hardware(text + "nics_per_node = 0\n", "zero"), std::exception);
}

TEST(analysis_predict_links, congestion_factor_interpolates_in_log_bytes_on_shared_links_only) {
    figures f;
    f.node_links = 1;
    f.congestion[{coll::alltoall, mpi_call::blocking}] = {{1 << 20, 1.0}, {4 << 20, 2.0}};
    EXPECT_DOUBLE_EQ(congestion_factor(coll::alltoall, 2 << 20, 2, f), 1.5);  // log midpoint
    EXPECT_DOUBLE_EQ(congestion_factor(coll::alltoall, 1 << 10, 2, f), 1.0);  // held below
    EXPECT_DOUBLE_EQ(congestion_factor(coll::alltoall, 1 << 30, 2, f), 2.0);  // held above
    EXPECT_DOUBLE_EQ(congestion_factor(coll::alltoall, 4 << 20, 1, f), 1.0);  // a link each
    EXPECT_DOUBLE_EQ(congestion_factor(coll::allgather, 4 << 20, 2, f), 1.0); // not measured
    f.node_links = 0;                                                         // nothing shared
    EXPECT_DOUBLE_EQ(congestion_factor(coll::alltoall, 4 << 20, 2, f), 1.0);
}

TEST(analysis_predict_links, congested_shared_flows_give_back_the_curve_and_price_four_nodes) {
    const calibration cal = calibrate_links(true, true);
    EXPECT_NEAR(cal.node_links, 1, 0.05);
    for (coll op : {coll::allgather, coll::alltoall}) {
        ASSERT_TRUE(cal.congestion.count({op, mpi_call::blocking})) << to_string(op);
        for (const auto& [flow_bytes, factor] : cal.congestion.at({op, mpi_call::blocking}))
            EXPECT_NEAR(factor, planted_congestion(flow_bytes), 0.05 * factor)
                << to_string(op) << " at " << flow_bytes << " bytes per flow";
    }
    EXPECT_EQ(cal.congestion.count({coll::sendrecv, mpi_call::blocking}), 0u); // never shared
    // The nonblocking all-gather's own curve (half the excess), beside the blocking one's; a
    // nonblocking all-to-all, never measured, takes the blocking one's.
    ASSERT_TRUE(cal.congestion.count({coll::allgather, mpi_call::nonblocking}));
    for (const auto& [flow_bytes, factor] :
         cal.congestion.at({coll::allgather, mpi_call::nonblocking}))
        EXPECT_NEAR(factor, 1 + (planted_congestion(flow_bytes) - 1) / 2, 0.05 * factor)
            << "iallgather at " << flow_bytes << " bytes per flow";
    const figures nb = comm_bound(cal);
    EXPECT_NEAR(congestion_factor(coll::allgather, 8 << 20, 2, nb, mpi_call::nonblocking), 1.5,
                0.08);
    EXPECT_NEAR(congestion_factor(coll::allgather, 8 << 20, 2, nb, mpi_call::blocking), 2.0, 0.1);
    EXPECT_DOUBLE_EQ(congestion_factor(coll::alltoall, 8 << 20, 2, nb, mpi_call::nonblocking),
                     congestion_factor(coll::alltoall, 8 << 20, 2, nb, mpi_call::blocking));
    coll parsed;
    mpi_call call = mpi_call::blocking;
    ASSERT_TRUE(parse_coll("iallgather", parsed, &call));
    EXPECT_EQ(parsed, coll::allgather);
    EXPECT_EQ(call, mpi_call::nonblocking);
    // MPI's all-to-all on 4 nodes x 2 ranks: at 8 MiB each flow moves 6 MiB (measured on
    // 2 x 2 at 2 and 8 MiB per flow, both 2x), at 128 KiB 96 KiB (32 and 128 KiB: 1x).
    const figures f = comm_bound(cal);
    for (std::int64_t bytes : {std::int64_t{128} << 10, std::int64_t{8} << 20}) {
        target t;
        t.job = "collectives";
        t.variant = "alltoall";
        t.identity = {
            {"op", "alltoall"}, {"scope", "world"}, {"requested_bytes", std::to_string(bytes)}};
        t.where = {8, 4, 2};
        const double flow_bytes = static_cast<double>(bytes) * 6 / 8;
        const double want = 7 * alpha + flow_bytes * 2 / beta * planted_congestion(flow_bytes);
        EXPECT_NEAR(predict_target(t, f).time.total(), want, 0.05 * want) << bytes;
        figures plain = f; // the same figures without the curve: off by the planted factor
        plain.congestion.clear();
        if (planted_congestion(flow_bytes) > 1) {
            EXPECT_LT(predict_target(t, plain).time.total(), 0.6 * want) << bytes;
        }
    }
}

TEST(analysis_predict_links, sendrecv_flows_count_a_nodes_ranks_sending_across) {
    EXPECT_EQ(sendrecv_flows(1, 4, 2), 1); // a ring: one flow leaves each node
    EXPECT_EQ(sendrecv_flows(2, 4, 2), 2); // --shift node: both ranks cross
    EXPECT_EQ(sendrecv_flows(2, 8, 2), 2);
    EXPECT_EQ(sendrecv_flows(3, 8, 4), 3);
    EXPECT_EQ(sendrecv_flows(4, 8, 4), 4);
    EXPECT_EQ(sendrecv_flows(1, 2, 1), 1);
    EXPECT_EQ(sendrecv_flows(5, 2, 1), 1);
}

// A sendrecv link test with every rank of a node crossing (--shift node) gives that sendrecv
// its congestion curve, which prices the collectives job's shifted sendrecv on more nodes. The
// schemes' ring hops do not take it (links.hpp shared_inter: measured, it made the hybrid's
// predictions worse): a hybrid's and a plain ring's are priced as without the curve.
TEST(analysis_predict_links, shifted_sendrecv_gets_its_congestion_curve_the_ring_hops_do_not) {
    const std::string dir = ringscale::test_fixture::fixture_dir("predict_links_shifted");
    for (int per_node : {1, 2}) {
        fixture_file file;
        for (std::int64_t bytes = 65536; bytes <= (16 << 20); bytes *= 4) {
            file.cases.push_back(link_test("alltoall", 2, per_node, bytes, true));
            file.cases.push_back(link_test("sendrecv", 2, per_node, bytes, true));
            if (per_node == 2)
                file.cases.push_back(link_test("sendrecv", 2, per_node, bytes, true, 2));
        }
        write_fixture_file(dir + "/link_2x" + std::to_string(per_node) + ".h5", file);
    }
    const result_set rs = load_results({dir}, true);
    const calibration_set set = gather_calibration(pool_cases(rs.cases));
    std::vector<double> cy, ly;
    observation_medians(set, cy, ly);
    const calibration cal = fit_calibration(set, cy, ly);
    EXPECT_NEAR(cal.node_links, 1, 0.05);
    ASSERT_TRUE(cal.congestion.count({coll::sendrecv, mpi_call::blocking}));
    for (const auto& [flow_bytes, factor] : cal.congestion.at({coll::sendrecv, mpi_call::blocking}))
        EXPECT_NEAR(factor, planted_congestion(flow_bytes), 0.05 * factor)
            << "sendrecv at " << flow_bytes << " bytes per flow";
    const figures f = comm_bound(cal);
    figures plain = f;
    plain.congestion.clear();
    // The collectives job's own cases on 4 nodes x 2 ranks at 4 MiB: the ring one flow, the
    // shifted one two flows a link, congested 2x.
    const double bytes = 4 << 20;
    target t;
    t.job = "collectives";
    t.variant = "sendrecv";
    t.identity = {{"op", "sendrecv"}, {"scope", "world"}, {"requested_bytes", "4194304"}};
    t.where = {8, 4, 2};
    EXPECT_NEAR(predict_target(t, f).time.total(), alpha + bytes / beta, 0.05 * bytes / beta);
    t.identity["shift"] = "2";
    const double want = alpha + bytes * 2 / beta * 2;
    EXPECT_NEAR(predict_target(t, f).time.total(), want, 0.05 * want);
    EXPECT_LT(predict_target(t, plain).time.total(), 0.6 * want);
    const step_prediction hybrid = predict_target(attention("context_parallel", "hybrid", 4), f);
    ASSERT_TRUE(hybrid.ok()) << hybrid.refusal;
    EXPECT_DOUBLE_EQ(
        hybrid.time.beta[1],
        predict_target(attention("context_parallel", "hybrid", 4), plain).time.beta[1]);
    EXPECT_DOUBLE_EQ(predict_target(attention("ring_attention", "ring", 4), f).time.beta[1],
                     predict_target(attention("ring_attention", "ring", 4), plain).time.beta[1]);
}

// --ulysses-placement across: ranks ordered by local index, then node, so a u=2 group holds
// one rank of each of two nodes. On 4 nodes x 2 its all-to-alls cross the link, every rank of
// a node at once (half of each buffer off the node, two flows a link), and the ring hop
// p -> p + 2 still crosses; on 2 nodes x 2 the hop lands on the rank's own node.
TEST(analysis_predict_links, hybrid_groups_across_nodes_cross_the_link_in_their_all_to_alls) {
    const figures f = comm_bound(calibrate_links(true));
    const double exchanged = (8 + 2 * 8) * 4.0 * 512 * 64 + 8 * 4.0 * 512 * 64; // in, out
    for (int nodes : {4, 2}) {
        target inside = attention("context_parallel", "hybrid", nodes);
        inside.identity["ulysses_placement"] = "node";
        target across = inside;
        across.identity["ulysses_placement"] = "across";
        const step_prediction in = predict_target(inside, f), out = predict_target(across, f);
        ASSERT_TRUE(in.ok() && out.ok()) << in.refusal << out.refusal;
        EXPECT_EQ(out.label, "hybrid/u2");
        // 4096 tokens on 2 nodes: rows 1024 a rank, twice the exchange of 4 nodes.
        const double bytes = exchanged * 4 / nodes;
        const double hops = nodes == 4 ? in.time.beta[1] : 0; // the ring: the same, or inside
        EXPECT_NEAR(out.time.beta[1], hops + bytes / beta, 0.05 * (hops + bytes / beta)) << nodes;
        EXPECT_NEAR(out.time.alpha[1] - (nodes == 4 ? in.time.alpha[1] : 0), 2 * alpha, 0.1 * alpha)
            << nodes;
    }
}

// The hybrid's auto degree (ulysses_degree 0) is the job's: on one node the largest divisor of
// P not above sqrt(P); on several the largest that fits a node and divides the K/V heads.
TEST(analysis_predict_links, hybrid_auto_degree_follows_the_job) {
    const figures f = comm_bound(calibrate_links(true));
    target t = attention("context_parallel", "hybrid", 2);
    t.identity["ulysses_degree"] = "0";
    t.where = {8, 2, 4};
    EXPECT_EQ(predict_target(t, f).label, "hybrid/u4");
    t.where = {8, 1, 8};
    EXPECT_EQ(predict_target(t, f).label, "hybrid/u2");
    t.where = {8, 2, 4};
    t.identity["kv_heads"] = "2";
    EXPECT_EQ(predict_target(t, f).label, "hybrid/u2");
}

TEST(analysis_predict_links, ranks_outnumbering_a_nodes_cores_share_its_copy_rate) {
    // P=4 on 2 cores. MPI's shared-memory transport copies and reduces with the
    // ranks' cores, so 2 ranks to a core take twice the time of the calibration's 1.
    figures f;
    f.links[0] = {20e-6, 4e9};
    f.node_cores = 2;
    const double alone = coll_cost(coll::allreduce, 8 << 20, 4, link_level::intra, f).total();
    EXPECT_DOUBLE_EQ(placed_coll_cost(coll::allreduce, 8 << 20, 4, 4, f).total(), 2 * alone);
    EXPECT_DOUBLE_EQ(alltoall_cost(8 << 20, 4, 4, f).total(),
                     2 * coll_cost(coll::alltoall, 8 << 20, 4, link_level::intra, f).total());
    f.node_cores = 4; // a core each: as calibrated
    EXPECT_DOUBLE_EQ(placed_coll_cost(coll::allreduce, 8 << 20, 4, 4, f).total(), alone);
    f.node_cores = 2;
    f.gpu = true; // NCCL moves with the GPUs, not the host's cores
    EXPECT_DOUBLE_EQ(placed_coll_cost(coll::allreduce, 8 << 20, 4, 4, f).total(), alone);
}
