// Flash-style CPU backward against the reference backward. Tolerance 2e-5 + 1e-4 * |ref|
// per element: gradients are sums over up to a few hundred keys or queries of O(1) fp32
// terms (expected error ~ sqrt(n) * 6e-8 * magnitude), P is recomputed with a 2e-7
// exp2; a masking, scaling or delta bug moves values by >= 1e-2 relative.
#include "kernels/cpu/attention_cpu.hpp"

#include "kernels/layout.hpp"
#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;
using namespace ringscale::kernels::reference;
using pos_t = std::vector<std::int64_t>;

namespace {

struct grads {
    std::vector<float> dq, dk, dv;
};

struct problem {
    attention_shape s;
    std::vector<float> q, k, v, d_o;
    pos_t qp, kp;
};

problem make_problem(std::int64_t sq, std::int64_t sk, std::int64_t d, bool causal, pos_t qp,
                     pos_t kp) {
    problem p;
    p.s.batch = 2;
    p.s.heads = 4;
    p.s.kv_heads = 2;
    p.s.q_len = sq;
    p.s.k_len = sk;
    p.s.head_dim = d;
    p.s.causal = causal;
    p.q.resize(attention_q_elems(p.s));
    p.k.resize(attention_kv_elems(p.s));
    p.v.resize(p.k.size());
    p.d_o.resize(p.q.size());
    fill_uniform(p.q.data(), p.q.size(), 31, 0, 2.0f);
    fill_uniform(p.k.data(), p.k.size(), 32, 0, 2.0f);
    fill_uniform(p.v.data(), p.v.size(), 33, 0);
    fill_uniform(p.d_o.data(), p.d_o.size(), 34, 0);
    p.qp = std::move(qp);
    p.kp = std::move(kp);
    return p;
}

pos_t iota_pos(std::int64_t n, std::int64_t first = 0) {
    pos_t p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), first);
    return p;
}

grads ref_grads(const problem& p) {
    grads g{std::vector<float>(p.q.size()), std::vector<float>(p.k.size()),
            std::vector<float>(p.k.size())};
    attention_bwd_ref(p.s, p.q.data(), p.k.data(), p.v.data(), p.d_o.data(), p.qp.data(),
                      p.kp.data(), g.dq.data(), g.dk.data(), g.dv.data());
    return g;
}

/// Fast forward then fast backward over the whole key set as one block.
grads cpu_grads(const problem& p, attention_tiles tiles) {
    attention_workspace ws;
    attention_workspace_reserve(ws, tiles);
    const std::int64_t rows = p.s.batch * p.s.heads * p.s.q_len;
    std::vector<float> o(p.q.size()), lse(rows), delta(rows);
    attention_fwd_init(p.s, o.data(), lse.data());
    attention_fwd_cpu(p.s, p.q.data(), p.k.data(), p.v.data(), p.qp.data(), p.kp.data(), o.data(),
                      lse.data(), ws);
    attention_bwd_delta(p.s, o.data(), p.d_o.data(), delta.data());
    grads g{std::vector<float>(p.q.size(), 0.0f), std::vector<float>(p.k.size(), 0.0f),
            std::vector<float>(p.k.size(), 0.0f)};
    attention_bwd_cpu(p.s, p.q.data(), p.k.data(), p.v.data(), p.d_o.data(), lse.data(),
                      delta.data(), p.qp.data(), p.kp.data(), g.dq.data(), g.dk.data(), g.dv.data(),
                      ws);
    return g;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const float tol = 2e-5f + 1e-4f * std::fabs(want[i]);
        if (!(std::fabs(got[i] - want[i]) <= tol) && bad++ < 5)
            ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs ref " << want[i];
    }
    EXPECT_EQ(bad, 0u) << what;
}

void expect_grads(const grads& got, const grads& want) {
    expect_close(got.dq, want.dq, "dQ");
    expect_close(got.dk, want.dk, "dK");
    expect_close(got.dv, want.dv, "dV");
}

} // namespace

TEST(attention_cpu_bwd, non_causal_odd_lengths) {
    const problem p = make_problem(77, 150, 64, false, iota_pos(77), iota_pos(150));
    expect_grads(cpu_grads(p, {32, 64}), ref_grads(p));
}

TEST(attention_cpu_bwd, causal_gqa_head_dim_128) {
    const problem p = make_problem(130, 130, 128, true, iota_pos(130), iota_pos(130));
    expect_grads(cpu_grads(p, {32, 48}), ref_grads(p));
}

TEST(attention_cpu_bwd, causal_striped_positions_with_fully_masked_rows) {
    // Queries of striped rank 0 against keys of rank 3: query position 0 sees no key.
    const pos_t qp = layout_positions(layout::striped, 256, 4, 0);
    const pos_t kp = layout_positions(layout::striped, 256, 4, 3);
    const problem p = make_problem(64, 64, 64, true, qp, kp);
    const grads g = cpu_grads(p, {16, 16});
    for (float x : g.dq)
        ASSERT_FALSE(std::isnan(x));
    expect_grads(g, ref_grads(p));
}

// A tile on the causal diagonal goes in two passes: P and dS by blocks of 32 query rows, each
// against the keys its last row sees (zeros past them to the next 64 keys), then dV and dK by
// blocks of 64 keys over every row that sees the block. Odd lengths (a last tile of 44 rows),
// and zigzag's positions, where a block's visible keys are not a prefix of the tile's in order.
TEST(attention_cpu_bwd, causal_diagonal_tiles_in_row_blocks_then_key_blocks) {
    const problem p = make_problem(300, 300, 64, true, iota_pos(300), iota_pos(300));
    expect_grads(cpu_grads(p, {256, 256}), ref_grads(p));
    const pos_t qp = layout_positions(layout::zigzag, 512, 2, 1);
    const problem z = make_problem(256, 256, 64, true, qp, qp);
    expect_grads(cpu_grads(z, {192, 128}), ref_grads(z));
}

// Ring backward: the final LSE comes from the forward over all blocks; each K/V block's
// backward adds its part of dQ and produces that block's dK, dV.
TEST(attention_cpu_bwd, blocks_with_final_lse_equal_full_backward) {
    const std::int64_t seq = 192;
    const int ranks = 3;
    const problem full = make_problem(seq, seq, 64, true, iota_pos(seq), iota_pos(seq));
    const grads want = ref_grads(full);
    const std::int64_t rows = full.s.batch * full.s.heads * seq;
    std::vector<float> o(full.q.size()), lse(rows), delta(rows);
    attention_fwd_ref(full.s, full.q.data(), full.k.data(), full.v.data(), full.qp.data(),
                      full.kp.data(), o.data(), lse.data());
    attention_bwd_delta(full.s, o.data(), full.d_o.data(), delta.data());

    attention_shape s = full.s;
    s.k_len = seq / ranks;
    attention_workspace ws;
    attention_workspace_reserve(ws, {32, 32});
    grads got{std::vector<float>(full.q.size(), 0.0f), std::vector<float>(full.k.size()),
              std::vector<float>(full.k.size())};
    for (int r = 0; r < ranks; ++r) {
        const pos_t kp = layout_positions(layout::zigzag, seq, ranks, r);
        std::vector<float> k(attention_kv_elems(s)), v(k.size()), dk(k.size(), 0.0f),
            dv(k.size(), 0.0f);
        const std::int64_t outer = s.batch * s.kv_heads;
        scatter_rows(full.k.data(), outer, seq, 64, kp, k.data());
        scatter_rows(full.v.data(), outer, seq, 64, kp, v.data());
        attention_bwd_cpu(s, full.q.data(), k.data(), v.data(), full.d_o.data(), lse.data(),
                          delta.data(), full.qp.data(), kp.data(), got.dq.data(), dk.data(),
                          dv.data(), ws);
        gather_rows(dk.data(), outer, seq, 64, kp, got.dk.data());
        gather_rows(dv.data(), outer, seq, 64, kp, got.dv.data());
    }
    expect_grads(got, want);
}
