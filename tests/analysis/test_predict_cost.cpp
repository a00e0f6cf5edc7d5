// The cost model's pure functions (analysis/predict/): collectives' bus factors and steps,
// visible causal pairs against brute force, each scheme's overlap rule on hand-computed
// cases, the DDP bucket schedule, NNLS, hardware profiles and --at parsing, exact values.
#include "analysis/predict/calibrate.hpp"
#include "analysis/predict/hardware.hpp"
#include "analysis/predict/links.hpp"
#include "analysis/predict/schemes.hpp"
#include "analysis/predict/target.hpp"
#include "analysis/predict/train.hpp"
#include "src/base/error.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

using namespace ringscale::analysis::predict;

namespace {

/// Positions a rank holds, as kernels/layout.cpp lays them out.
std::vector<long> positions(const std::string& layout, long s, int p, int r) {
    std::vector<long> out;
    if (layout == "contiguous")
        for (long i = 0; i < s / p; ++i)
            out.push_back(r * (s / p) + i);
    if (layout == "striped")
        for (long i = 0; i < s / p; ++i)
            out.push_back(i * p + r);
    if (layout == "zigzag") {
        const long m = s / (2 * p);
        for (long c : {static_cast<long>(r), 2L * p - 1 - r})
            for (long i = 0; i < m; ++i)
                out.push_back(c * m + i);
    }
    return out;
}

double brute_pairs(const std::string& layout, long s, int p, int a, int b) {
    double n = 0;
    for (long q : positions(layout, s, p, a))
        for (long k : positions(layout, s, p, b))
            n += k <= q;
    return n;
}

/// Figures with compute `attn` s/FLOP only and one link level.
figures simple(double attn, double alpha, double beta) {
    figures f;
    f.compute = {attn, 0, 0, 0};
    f.links[0] = {alpha, beta};
    f.gpu = true; // width 1
    return f;
}

} // namespace

TEST(predict_cost, bus_factors_and_steps_follow_nccl_tests) {
    EXPECT_DOUBLE_EQ(busbw_factor(coll::allreduce, 4), 1.5);
    EXPECT_DOUBLE_EQ(busbw_factor(coll::allgather, 4), 0.75);
    EXPECT_DOUBLE_EQ(busbw_factor(coll::sendrecv, 4), 1);
    EXPECT_DOUBLE_EQ(alg_steps(coll::allreduce, 4), 6);
    EXPECT_DOUBLE_EQ(alg_steps(coll::alltoall, 4), 3);
    EXPECT_DOUBLE_EQ(alg_steps(coll::broadcast, 8), 3);
    const figures f = simple(0, 2e-6, 1e9);
    // allreduce of 8 MB over 4 ranks: 6 alpha + 8e6 * 1.5 / 1e9
    const cost c = coll_cost(coll::allreduce, 8e6, 4, link_level::intra, f);
    EXPECT_DOUBLE_EQ(c.alpha[0], 12e-6);
    EXPECT_DOUBLE_EQ(c.beta[0], 12e-3);
    EXPECT_DOUBLE_EQ(coll_cost(coll::allreduce, 8e6, 1, link_level::intra, f).total(), 0);
}

TEST(predict_cost, alltoall_across_nodes_is_bounded_by_the_inter_node_share) {
    figures f = simple(0, 1e-6, 100e9);
    f.links[1] = {10e-6, 10e9};
    // 16 ranks, 4 per node: 12/16 of 1.6 GB leaves the node at 10 GB/s, 15 inter steps.
    const cost c = alltoall_cost(1.6e9, 16, 4, f);
    EXPECT_DOUBLE_EQ(c.beta[1], 1.6e9 * 12 / 16 / 10e9);
    EXPECT_DOUBLE_EQ(c.alpha[1], 15 * 10e-6);
    EXPECT_DOUBLE_EQ(c.beta[0], 0);
}

TEST(predict_cost, visible_pairs_match_brute_force) {
    for (const char* layout : {"contiguous", "zigzag", "striped"})
        for (int p : {1, 2, 3, 4})
            for (int a = 0; a < p; ++a)
                for (int b = 0; b < p; ++b)
                    EXPECT_DOUBLE_EQ(visible_pairs(layout, 48, p, a, b, true),
                                     brute_pairs(layout, 48, p, a, b))
                        << layout << " P=" << p << " " << a << "," << b;
    EXPECT_DOUBLE_EQ(visible_pairs("zigzag", 48, 4, 1, 2, false), 144);
}

TEST(predict_cost, group_pairs_are_the_sum_over_member_pairs) {
    attention_problem a;
    a.seq_len = 96;
    a.causal = true;
    for (const char* layout : {"contiguous", "zigzag", "striped"}) {
        a.layout = layout;
        for (int qg = 0; qg < 3; ++qg)
            for (int kg = 0; kg < 3; ++kg) {
                double sum = 0;
                for (int i = 0; i < 2; ++i)
                    for (int j = 0; j < 2; ++j)
                        sum += brute_pairs(layout, 96, 6, qg * 2 + i, kg * 2 + j);
                EXPECT_DOUBLE_EQ(group_pairs(a, 6, 2, qg, kg), sum) << layout;
            }
    }
    EXPECT_DOUBLE_EQ(group_pairs(a, 6, 6, 0, 0), 96.0 * 97 / 2);
}

TEST(predict_cost, ring_forward_overlaps_each_hop_with_a_block) {
    // Two ranks, contiguous, causal, forward only, B=H=Hkv=1, D=1, S=4, 4-byte elements.
    attention_problem a;
    a.seq_len = 4;
    a.heads = a.kv_heads = a.head_dim = 1;
    a.causal = true;
    a.layout = "contiguous";
    // Rank 1: own block (diagonal, 3 pairs) while the hop runs, then rank 0's block (4 pairs).
    // Block FLOP = 4 per pair at 1 s/FLOP: 12 s then 16 s; the hop of K|V (2 rows x 2 x 4 B
    // = 16 B) costs 1 + 16 = 17 s, longer than 12: 17 + 16 = 33 s.
    const step_prediction slow = predict_attention("ring", 0, a, {2, 1, 2}, simple(1, 1, 1), 1);
    ASSERT_TRUE(slow.ok()) << slow.refusal;
    EXPECT_DOUBLE_EQ(slow.time.total(), 33);
    EXPECT_DOUBLE_EQ(slow.time.attn, 16); // the hop hid the first block
    EXPECT_DOUBLE_EQ(slow.time.beta[0], 16);
    a.overlap = false; // every hop adds: 12 + 17 + 16
    EXPECT_DOUBLE_EQ(predict_attention("ring", 0, a, {2, 1, 2}, simple(1, 1, 1), 1).time.total(),
                     45);
}

TEST(predict_cost, attention_blocks_pay_the_per_call_overhead_on_a_gpu_only) {
    // A GPU block is a kernel launch; a CPU block a function call (ring at P=4 on
    // 2 cores makes 4x Ulysses' calls and measures the same time).
    attention_problem a;
    a.seq_len = 8;
    a.heads = a.kv_heads = a.head_dim = 1;
    a.layout = "contiguous";
    figures f = simple(1, 0, 1e9);
    f.compute.s_per_call = 100;
    const step_prediction gpu = predict_attention("ring", 0, a, {4, 1, 4}, f, 1, 3);
    ASSERT_TRUE(gpu.ok()) << gpu.refusal;
    EXPECT_DOUBLE_EQ(gpu.time.calls, 4 * 100); // rank 3 computes a block against every rank
    f.gpu = false;
    const step_prediction cpu = predict_attention("ring", 0, a, {4, 1, 4}, f, 1, 3);
    ASSERT_TRUE(cpu.ok()) << cpu.refusal;
    EXPECT_DOUBLE_EQ(cpu.time.calls, 0);
    EXPECT_DOUBLE_EQ(cpu.time.attn, gpu.time.attn);
}

TEST(predict_cost, ulysses_is_two_all_to_alls_around_local_attention) {
    attention_problem a;
    a.seq_len = 8;
    a.heads = a.kv_heads = 2;
    a.head_dim = 1;
    a.causal = false;
    a.layout = "contiguous";
    // P=2: local attention on 1 head over all 8 rows: 4 * 64 pairs = 256 s. In: Q,K,V of
    // 4 rows x 2 heads x 4 B = 96 B, alltoall (1 step, factor 1/2): 1 + 48; out: O 32 B: 1 + 16.
    const step_prediction s = predict_attention("ulysses", 0, a, {2, 1, 2}, simple(1, 1, 1), 1);
    ASSERT_TRUE(s.ok()) << s.refusal;
    EXPECT_DOUBLE_EQ(s.time.attn, 256);
    EXPECT_DOUBLE_EQ(s.time.total(), 256 + 49 + 17);
    EXPECT_NE(predict_attention("ulysses", 0, a, {4, 1, 4}, simple(1, 1, 1), 1).refusal, "");
}

TEST(predict_cost, ddp_hides_buckets_behind_the_backward_but_not_the_last) {
    train_problem t;
    t.layers = 1;
    t.hidden = 64;
    t.heads = 1;
    t.vocab = 64;
    t.seq_len = 64;
    t.tokens = 128;
    t.dp = 2;
    t.bucket_bytes = 1; // one bucket per unit
    figures f = simple(0, 0, 1e12);
    f.compute.s_per_gemm_flop = 1e-9;
    f.compute.s_per_mem_byte = 1e-9; // the embedding's backward outlasts the block's bucket
    f.compute.s_per_call = 0;
    const step_prediction ddp = predict_train(t, {2, 1, 2}, f, 1);
    ASSERT_TRUE(ddp.ok()) << ddp.refusal;
    // Only the embedding's bucket (posted last, 64x64 floats) stays exposed.
    EXPECT_NEAR(ddp.time.beta[0], 64 * 64 * 4 * 1.0 / 1e12, 1e-18);
    // ZeRO-1 reduce-scatters the same buckets as the backward completes them: only the
    // embedding's stays exposed (half an all-reduce's bytes at P = 2), then the all-gather
    // of every parameter after AdamW.
    t.dp_variant = "zero1";
    const step_prediction z = predict_train(t, {2, 1, 2}, f, 1);
    EXPECT_NEAR(z.time.beta[0], (64 * 64 + total_params(t)) * 4 * 0.5 / 1e12, 1e-16);
}

TEST(predict_cost, unit_sizes_follow_the_model_layout) {
    train_problem t; // 4 layers, hidden 512, vocab 1024
    EXPECT_DOUBLE_EQ(unit_params(t, 0), 1024 * 512);
    EXPECT_DOUBLE_EQ(unit_params(t, 1), 12.0 * 512 * 512 + 8 * 512);
    EXPECT_DOUBLE_EQ(unit_params(t, 5), 512 + 1024 * 512 + 1024);
    EXPECT_DOUBLE_EQ(total_params(t),
                     1024 * 512 + 4 * (12.0 * 512 * 512 + 8 * 512) + 512 + 1024 * 512 + 1024);
}

// GQA, the FFN width and SwiGLU price a Llama-3-8B-like layer as the model lays it out:
// 218,148,864 parameters (jobs/presets/llama3_8b.ini's hand count), forward GEMM FLOPs twice
// its weight matrices' elements per token, and K/V at 8 of the 32 heads for the attention.
TEST(predict_cost, gqa_ffn_and_swiglu_are_priced) {
    train_problem t;
    t.hidden = 4096;
    t.heads = 32;
    t.kv_heads = 8;
    t.ffn = 14336;
    t.swiglu = true;
    const block_widths w = widths(t);
    EXPECT_DOUBLE_EQ(w.kv, 1024);
    EXPECT_DOUBLE_EQ(w.qkv, 6144);
    EXPECT_DOUBLE_EQ(w.up, 28672);
    EXPECT_DOUBLE_EQ(unit_params(t, 1), 218148864.0);
    const double matrices = 218148864.0 - 4 * 4096 - 28672; // less norms and biases
    EXPECT_DOUBLE_EQ(block_gemm_flops(t, 8192), 2 * 8192 * matrices);
    train_problem plain; // the GELU model: 12 h^2 weights, 24 h^2 FLOPs a token
    EXPECT_DOUBLE_EQ(block_gemm_flops(plain, 1), 24.0 * 512 * 512);
    // GQA shrinks the activations a rank holds: K, V and their scratch at 1024 of 4096.
    train_problem mha = t;
    mha.kv_heads = 0;
    EXPECT_LT(train_memory(t, true), train_memory(mha, true));
}

TEST(predict_cost, nnls_keeps_coefficients_non_negative) {
    // y = 2 x0 exactly: the unconstrained fit of y against (x0, x1) with noise-free data
    // is (2, 0); y = x0 - x1 would need a negative coefficient: NNLS gives x1 0.
    const std::vector<std::vector<double>> x = {{1, 0}, {2, 1}, {3, 1}, {4, 2}};
    EXPECT_NEAR(nnls(x, {2, 4, 6, 8}, {1, 1, 1, 1})[0], 2, 1e-12);
    EXPECT_NEAR(nnls(x, {2, 4, 6, 8}, {1, 1, 1, 1})[1], 0, 1e-12);
    const auto c = nnls(x, {1, 1, 2, 2}, {1, 1, 1, 1});
    EXPECT_GE(c[1], 0);
    EXPECT_NEAR(c[0], (1 + 2 + 6 + 8) / 30.0, 1e-12); // LS through the origin on x0 alone
    EXPECT_TRUE(std::isnan(nnls({{1, 0}, {2, 0}}, {1, 2}, {1, 1})[1])); // never measured
}

TEST(predict_cost, link_fit_on_log_error_is_not_pulled_down_by_a_fast_row) {
    // Rows (steps, bytes): alpha 10 us, 1 / beta = 25 ns per byte (40 MB/s), 64K to 4M.
    const std::vector<std::vector<double>> x = {
        {1, 65536}, {1, 262144}, {1, 1048576}, {1, 4194304}};
    std::vector<double> y;
    for (const auto& r : x)
        y.push_back(10e-6 * r[0] + 25e-9 * r[1]);
    std::vector<double> w;
    for (double v : y)
        w.push_back(1 / v);
    const auto exact = nnls_log(x, y, nnls(x, y, w)); // exact data: the planted figures
    EXPECT_NEAR(exact[0], 10e-6, 1e-9);
    EXPECT_NEAR(exact[1], 25e-9, 1e-12);
    // The smallest message 40x faster (a link shaper's burst): relative error fits that row
    // and predicts 4M about 40x too fast; the fit on |log ratio| follows the three rows that
    // agree.
    y[0] /= 40;
    w[0] *= 40;
    const auto relative = nnls(x, y, w);
    const auto logfit = nnls_log(x, y, relative);
    EXPECT_LT(relative[1], 25e-9 / 10); // what the fit was before (fails if nnls changes)
    EXPECT_NEAR(logfit[1], 25e-9, 0.05 * 25e-9);
    EXPECT_GE(logfit[0], 0);
}

TEST(predict_cost, hardware_profiles_state_every_figure) {
    const hardware_profile h = builtin_h100();
    const hardware_profile back = parse_hardware(profile_text(h), "round trip");
    EXPECT_EQ(back.name, h.name);
    EXPECT_DOUBLE_EQ(back.inter_busbw_gbs, 45);
    EXPECT_DOUBLE_EQ(profile_figures(h).links[1].beta_bps, 45e9);
    const std::string text = profile_text(h);
    const auto without = [&](const std::string& key) {
        const auto at = text.find(key + " =");
        return text.substr(0, at) + text.substr(text.find('\n', at) + 1);
    };
    EXPECT_THROW(parse_hardware(without("inter_busbw_gbs"), "f"), ringscale::config_error);
    EXPECT_THROW(parse_hardware(text + "peak_tflops = 0\n", "f"), ringscale::config_error);
    EXPECT_THROW(parse_hardware(text + "peak_tflops = -3\n", "f"), ringscale::config_error);
    EXPECT_THROW(parse_hardware(text + "peak_tflop = 3\n", "f"), ringscale::config_error);
    try {
        parse_hardware(without("intra_alpha_us"), "my.hw");
        FAIL();
    } catch (const ringscale::config_error& e) {
        EXPECT_EQ(std::string(e.what()), "hardware profile my.hw: missing figure "
                                         "'intra_alpha_us' (inside a node: latency per step, us)");
    }
}

TEST(predict_cost, at_sweeps_and_refuses) {
    const auto f = parse_at("nodes=1,2,4,seq_len=1M,P=8");
    ASSERT_EQ(f.size(), 3u);
    EXPECT_EQ(f[0].values, (std::vector<std::string>{"1", "2", "4"}));
    EXPECT_EQ(f[1].values, (std::vector<std::string>{"1048576"}));
    EXPECT_EQ(f[2].name, "world_size");
    EXPECT_THROW(parse_at("bogus=3"), ringscale::config_error);
    EXPECT_THROW(parse_at("3,nodes=2"), ringscale::config_error);
    EXPECT_THROW(parse_at("nodes=0"), ringscale::config_error);
    target tpl;
    tpl.job = "ring_attention";
    tpl.identity = {{"seq_len", "4096"}, {"layout", "zigzag"}};
    tpl.where = {2, 1, 2};
    auto got = expand_at({tpl}, parse_at("world_size=16,ranks_per_node=8,seq_len=8K,16K"), nullptr);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].where.nodes, 2);
    EXPECT_EQ(got[1].identity.at("seq_len"), "16384");
    EXPECT_THROW(expand_at({tpl}, parse_at("world_size=12,ranks_per_node=8"), nullptr),
                 ringscale::config_error);
    EXPECT_THROW(expand_at({tpl}, parse_at("hidden=1024"), nullptr), ringscale::config_error);
    // Without topology the calibration is one node; P alone stays one node.
    got = expand_at({tpl}, parse_at("P=4"), nullptr);
    EXPECT_EQ(got[0].where.ranks_per_node, 4);
    const hardware_profile h = builtin_h100(); // 8 per node: P=64 is 8 nodes
    got = expand_at({tpl}, parse_at("P=64"), &h);
    EXPECT_EQ(got[0].where.nodes, 8);
    EXPECT_THROW(expand_at({tpl}, parse_at("P=12"), &h), ringscale::config_error);
    // A collectives template's variant is its op: two ops set to one are one target, named
    // by the op --at gives.
    target sr, ar;
    sr.job = ar.job = "collectives";
    sr.variant = "sendrecv";
    ar.variant = "allreduce";
    sr.identity = {{"op", "sendrecv"}, {"requested_bytes", "1024"}};
    ar.identity = {{"op", "allreduce"}, {"requested_bytes", "1024"}};
    sr.where = ar.where = {2, 1, 2};
    got = expand_at({sr, ar}, parse_at("op=alltoall"), nullptr);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].variant, "alltoall");
}

TEST(predict_cost, the_slowest_rank_of_p_scales_compute_by_its_expected_jitter) {
    EXPECT_DOUBLE_EQ(expected_max_normal(1), 0);
    EXPECT_NEAR(expected_max_normal(2), 1 / std::sqrt(M_PI), 1e-9);
    EXPECT_NEAR(expected_max_normal(3), 1.5 / std::sqrt(M_PI), 1e-9);
    EXPECT_NEAR(expected_max_normal(4), 1.0293753730, 1e-8);
    cost c;
    c.attn = 2;
    c.beta[0] = 1;
    const cost j = with_rank_jitter(c, 0.1, 4);
    EXPECT_DOUBLE_EQ(j.attn, 2 * std::exp(0.1 * expected_max_normal(4)));
    EXPECT_DOUBLE_EQ(j.beta[0], 1); // communication is not a rank's own compute
    EXPECT_DOUBLE_EQ(with_rank_jitter(c, 0.1, 1).attn, 2);
}

// A masked case does less work, and skips exchanges, in ways the models do not know: priced as
// the dense case it would be off by up to the mask's density; train_step's cp groups placed
// across nodes exchange over other links than the model places them on. Both are refused,
// with the reason.
TEST(predict_cost, masks_and_cp_groups_across_nodes_are_refused_not_priced_dense) {
    const figures f = simple(1e12, 1e-5, 1e9);
    target dense;
    dense.job = "ring_attention";
    dense.variant = "ring";
    dense.identity = {{"seq_len", "4096"}, {"layout", "zigzag"}, {"heads", "8"}, {"kv_heads", "8"}};
    dense.where = {2, 1, 2};
    ASSERT_TRUE(predict_target(dense, f).ok()) << predict_target(dense, f).refusal;
    for (const auto& [mask, value] : std::vector<std::pair<std::string, std::string>>{
             {"window", "512"}, {"docs", "1K"}, {"sparsity", "0.5"}, {"dilation", "1K:2"}}) {
        target t = dense;
        t.identity[mask] = value;
        const step_prediction p = predict_target(t, f);
        EXPECT_FALSE(p.ok()) << mask;
        EXPECT_NE(p.refusal.find("masks (--" + mask + ")"), std::string::npos) << p.refusal;
    }
    target train;
    train.job = "train_step";
    train.variant = "ddp";
    train.identity = {{"dp", "2"}, {"cp", "2"}, {"cp_placement", "across"}};
    train.where = {4, 2, 2};
    EXPECT_NE(predict_target(train, f).refusal.find("cp_placement 'across'"), std::string::npos)
        << predict_target(train, f).refusal;
}
