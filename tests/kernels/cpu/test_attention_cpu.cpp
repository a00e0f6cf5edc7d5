// Fast CPU attention against the reference. Tolerances (fp32): inputs are in [-1, 1],
// scores are D-term dot products and every output is a convex (forward) or bounded
// (backward) combination of O(1) terms, so rounding is ~ sqrt(n) * 6e-8 relative with
// n <= a few hundred, plus the exp2 polynomial's 2e-7. We allow 2e-5 + 1e-4 * |ref|
// (about 100x the expected error); a masking, scaling or merge bug is >= 1e-2.
#include "kernels/cpu/attention_cpu.hpp"

#include "kernels/layout.hpp"
#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "kernels/threads.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;
using namespace ringscale::kernels::reference;
using pos_t = std::vector<std::int64_t>;

namespace {

struct inputs {
    std::vector<float> q, k, v, d_o;
};

inputs make_inputs(const attention_shape& s, std::uint64_t seed) {
    inputs in;
    in.q.resize(attention_q_elems(s));
    in.k.resize(attention_kv_elems(s));
    in.v.resize(in.k.size());
    in.d_o.resize(in.q.size());
    fill_uniform(in.q.data(), in.q.size(), seed, 0, 2.0f); // |score| up to ~2 sqrt(D)
    fill_uniform(in.k.data(), in.k.size(), seed + 1, 0, 2.0f);
    fill_uniform(in.v.data(), in.v.size(), seed + 2, 0);
    fill_uniform(in.d_o.data(), in.d_o.size(), seed + 3, 0);
    return in;
}

pos_t iota_pos(std::int64_t n, std::int64_t first = 0) {
    pos_t p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), first);
    return p;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isinf(want[i]) && got[i] == want[i])
            continue;
        const float tol = 2e-5f + 1e-4f * std::fabs(want[i]);
        if (!(std::fabs(got[i] - want[i]) <= tol) && bad++ < 5)
            ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs ref " << want[i];
    }
    EXPECT_EQ(bad, 0u) << what;
}

/// Forward of the fast kernel over one block, from an empty accumulator.
void fwd_cpu(const attention_shape& s, const inputs& in, const pos_t& qp, const pos_t& kp,
             attention_tiles tiles, std::vector<float>& o, std::vector<float>& lse) {
    attention_workspace ws;
    attention_workspace_reserve(ws, tiles);
    o.assign(in.q.size(), 0.0f);
    lse.assign(s.batch * s.heads * s.q_len, 0.0f);
    attention_fwd_init(s, o.data(), lse.data());
    attention_fwd_cpu(s, in.q.data(), in.k.data(), in.v.data(), qp.data(), kp.data(), o.data(),
                      lse.data(), ws);
}

void check_fwd(const attention_shape& s, const pos_t& qp, const pos_t& kp, attention_tiles t) {
    const inputs in = make_inputs(s, 100);
    std::vector<float> o_ref(in.q.size()), lse_ref(s.batch * s.heads * s.q_len), o, lse;
    attention_fwd_ref(s, in.q.data(), in.k.data(), in.v.data(), qp.data(), kp.data(), o_ref.data(),
                      lse_ref.data());
    fwd_cpu(s, in, qp, kp, t, o, lse);
    expect_close(o, o_ref, "O");
    expect_close(lse, lse_ref, "LSE");
}

attention_shape shape(std::int64_t h, std::int64_t hkv, std::int64_t sq, std::int64_t sk,
                      std::int64_t d, bool causal) {
    attention_shape s;
    s.batch = 2;
    s.heads = h;
    s.kv_heads = hkv;
    s.q_len = sq;
    s.k_len = sk;
    s.head_dim = d;
    s.causal = causal;
    return s;
}

} // namespace

TEST(attention_cpu, rejects_unsupported_head_dim_and_tiles) {
    EXPECT_THROW(check_attention_cpu_shape(shape(2, 1, 8, 8, 96, false)), ringscale::config_error);
    EXPECT_NO_THROW(check_attention_cpu_shape(shape(2, 1, 8, 8, 128, false)));
    attention_workspace ws;
    EXPECT_THROW(attention_workspace_reserve(ws, {8, 64}), ringscale::config_error);
}

TEST(attention_cpu, forward_non_causal_odd_lengths) {
    check_fwd(shape(2, 2, 77, 301, 64, false), iota_pos(77), iota_pos(301), {32, 64});
}

TEST(attention_cpu, forward_causal_gqa_head_dim_128) {
    check_fwd(shape(4, 2, 130, 130, 128, true), iota_pos(130), iota_pos(130), {32, 48});
}

TEST(attention_cpu, forward_default_tiles_gqa_causal) {
    check_fwd(shape(4, 1, 300, 300, 64, true), iota_pos(300), iota_pos(300), {});
}

// Query rows of one rank against key rows of another, for every layout: partial tiles
// whose masks are not a simple diagonal, and rows that see nothing in this block.
TEST(attention_cpu, forward_causal_positions_of_each_layout) {
    for (const layout l : {layout::contiguous, layout::zigzag, layout::striped})
        for (const auto& [qr, kr] : {std::pair<int, int>{0, 0}, {0, 2}, {2, 1}, {3, 3}}) {
            SCOPED_TRACE(std::string(to_string(l)) + " q rank " + std::to_string(qr) + " k rank " +
                         std::to_string(kr));
            const pos_t qp = layout_positions(l, 400, 4, qr);
            const pos_t kp = layout_positions(l, 400, 4, kr);
            check_fwd(shape(2, 1, 100, 100, 64, true), qp, kp, {32, 32});
        }
}

// A block entirely in the future of every query leaves the accumulator untouched.
TEST(attention_cpu, fully_masked_block_is_skipped) {
    const attention_shape s = shape(2, 2, 40, 50, 64, true);
    const inputs in = make_inputs(s, 7);
    std::vector<float> o, lse;
    fwd_cpu(s, in, iota_pos(40), iota_pos(50, 1000), {16, 16}, o, lse);
    for (float x : lse)
        EXPECT_EQ(x, -INFINITY);
    for (float x : o)
        ASSERT_EQ(x, 0.0f);
}

// The ring: each rank's query shard accumulates every rank's K/V block in ring order;
// the gathered result equals single-rank attention (zigzag, causal).
TEST(attention_cpu, forward_blocks_in_ring_order_equal_full_attention) {
    const int ranks = 4;
    const std::int64_t seq = 256, local = seq / ranks;
    const attention_shape full = shape(4, 2, seq, seq, 64, true);
    const inputs in = make_inputs(full, 21);
    std::vector<float> o_ref(in.q.size()), lse_ref(full.batch * full.heads * seq);
    const pos_t all = iota_pos(seq);
    attention_fwd_ref(full, in.q.data(), in.k.data(), in.v.data(), all.data(), all.data(),
                      o_ref.data(), lse_ref.data());
    attention_shape s = full;
    s.q_len = s.k_len = local;
    std::vector<float> o_all(o_ref.size()), lse_all(lse_ref.size());
    attention_workspace ws;
    attention_workspace_reserve(ws, {32, 32});
    for (int r = 0; r < ranks; ++r) {
        const pos_t qp = layout_positions(layout::zigzag, seq, ranks, r);
        std::vector<float> q(attention_q_elems(s)), o(q.size()), lse(s.batch * s.heads * local);
        scatter_rows(in.q.data(), full.batch * full.heads, seq, 64, qp, q.data());
        attention_fwd_init(s, o.data(), lse.data());
        for (int step = 0; step < ranks; ++step) {
            const pos_t kp =
                layout_positions(layout::zigzag, seq, ranks, ring_source_rank(r, step, ranks));
            std::vector<float> k(attention_kv_elems(s)), v(k.size());
            scatter_rows(in.k.data(), full.batch * full.kv_heads, seq, 64, kp, k.data());
            scatter_rows(in.v.data(), full.batch * full.kv_heads, seq, 64, kp, v.data());
            attention_fwd_cpu(s, q.data(), k.data(), v.data(), qp.data(), kp.data(), o.data(),
                              lse.data(), ws);
        }
        gather_rows(o.data(), full.batch * full.heads, seq, 64, qp, o_all.data());
        gather_rows(lse.data(), full.batch * full.heads, seq, 1, qp, lse_all.data());
    }
    expect_close(o_all, o_ref, "O");
    expect_close(lse_all, lse_ref, "LSE");
}

// Two worker threads (whatever the machine has) give the reference result, and the
// launcher's BLAS thread count is restored after the call.
TEST(attention_cpu, worker_threads_match_reference_and_restore_blas_threads) {
    const int saved = blas_threads();
    set_blas_threads(2);
    const attention_shape s = shape(3, 1, 200, 200, 64, true);
    const inputs in = make_inputs(s, 41);
    const pos_t pos = iota_pos(200);
    std::vector<float> o_ref(in.q.size()), lse_ref(s.batch * s.heads * s.q_len);
    attention_fwd_ref(s, in.q.data(), in.k.data(), in.v.data(), pos.data(), pos.data(),
                      o_ref.data(), lse_ref.data());
    attention_workspace ws;
    attention_workspace_reserve(ws, {32, 64}, 2);
    std::vector<float> o(in.q.size()), lse(lse_ref.size());
    attention_fwd_init(s, o.data(), lse.data());
    attention_fwd_cpu(s, in.q.data(), in.k.data(), in.v.data(), pos.data(), pos.data(), o.data(),
                      lse.data(), ws);
    EXPECT_EQ(blas_threads(), 2);
    set_blas_threads(saved);
    expect_close(o, o_ref, "O");
    expect_close(lse, lse_ref, "LSE");
}
