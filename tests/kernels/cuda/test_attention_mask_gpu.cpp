// The CUDA attention kernels under the masks of kernels/mask.hpp (the sm80 kernels' masked
// instantiation, which also runs where the sm90 path is resolved) against the double reference
// with the same mask, on seeded inputs rounded to bf16 / fp16. Each mask runs as a ring over
// 2 ranks: positions as arrays (zigzag: 4 chunks, the documents and windows crossing the
// blocks; striped: every other token, so no tile is a contiguous run) and as contiguous runs
// (the kernels' no-load fast path), GQA (4 query heads on 2 K/V heads), head_dim 64 and 128;
// the backward both with every query at once and with each rank's own queries. The mask's arrays
// reach the device through kernels::dev_mask on the CUDA executor. Tolerances:
// attention_gpu_support.hpp. Every test skips without a device.
#include "kernels/dev_mask.hpp"
#include "kernels/executor.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_spec.hpp"
#include "tests/kernels/cuda/attention_gpu_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::test_attention;

namespace {

constexpr std::int64_t k_seq = 300; // 2 ranks x 150 rows: zigzag chunks of 75, ragged tiles
constexpr int ranks = 2;

struct mask_case {
    const char* name;
    bool causal;
    std::int64_t window;
    const char* docs;
    double sparsity;
    const char* pattern;
    std::int64_t block;
    const char* dilation;
};

// Documents 137..256 cross both layouts' block boundaries (contiguous: 150; zigzag: 75, 225);
// the narrow window leaves whole 128-row query blocks without a key of the other rank's
// block; the wide windows span more than a 128-row query block and a 64-key block, so whole
// warp tiles are visible (the no-test path) beside partial and skipped ones; the 100-token
// sparse blocks straddle the 64-key tiles; the dilations leave rows with no visible key at
// all (O = 0, LSE = -inf; no gradient).
const mask_case k_masks[] = {
    {"window_causal", true, 40, "", -1, "random", 128, ""},
    {"window", false, 50, "", -1, "random", 128, ""},
    {"window_narrow", true, 12, "", -1, "random", 128, ""},
    {"window_wide_causal", true, 200, "", -1, "random", 128, ""},
    {"window_wide", false, 170, "", -1, "random", 128, ""},
    {"docs_causal", true, 0, "100+37+120+43", -1, "random", 128, ""},
    {"docs", false, 0, "fixed:64", -1, "random", 128, ""},
    {"docs_window", true, 30, "uniform:16-96", -1, "random", 128, ""},
    {"sparse_random_causal", true, 0, "", 0.5, "random", 16, ""},
    {"sparse_random", false, 0, "", 0.6, "random", 32, ""},
    {"sparse_random_b100", false, 0, "", 0.4, "random", 100, ""},
    {"sparse_local_global", true, 0, "", 0.7, "local_global", 16, ""},
    {"window_local_global", true, 90, "", 0.5, "local_global", 32, ""},
    {"dilation", true, 0, "", -1, "random", 128, "60:2+150:5"},
    {"docs_dilation", false, 0, "fixed:120", -1, "random", 128, "20:4+300:3"},
};

// The cases whose masks leave some query row with no visible key in the whole sequence.
bool has_unseen_rows(const std::string& name) {
    return name == "dilation" || name == "docs_dilation";
}

// Calls shorter than a warp's 16 rows and a 64-key tile: 36 tokens, 2 ranks x 18 rows,
// zigzag chunks of 9; a row with no visible key under the dilation.
const mask_case k_tiny_masks[] = {
    {"tiny_window_causal", true, 5, "", -1, "random", 128, ""},
    {"tiny_docs_window", false, 4, "7+20+9", -1, "random", 128, ""},
    {"tiny_sparse_causal", true, 0, "", 0.5, "random", 4, ""},
    {"tiny_dilation", true, 0, "", -1, "random", 128, "12:3+36:4"},
};

std::shared_ptr<const attention_mask> make_mask(const mask_case& c, std::int64_t seq) {
    mask_spec spec;
    spec.window = c.window;
    spec.docs = c.docs;
    spec.sparsity = c.sparsity;
    spec.pattern = c.pattern;
    spec.block = c.block;
    spec.dilation = c.dilation;
    return std::make_shared<const attention_mask>(spec, seq, c.causal);
}

// (mask index, dtype, head_dim, layout of the positions)
using mask_param = std::tuple<int, attn_dtype, int, layout>;

std::string param_name(const testing::TestParamInfo<mask_param>& info) {
    const auto [m, dtype, dim, lay] = info.param;
    return std::string(k_masks[m].name) + "_" + kc::to_string(dtype) + "_d" + std::to_string(dim) +
           "_" + to_string(lay);
}

// Positions of a call's side: arrays, or (contiguous layout) nullptr + first.
struct side {
    pos_t host;
    rt::device_buffer<std::int64_t> dev;
    bool contiguous;
};

side side_of(layout lay, pos_t p) {
    side s{std::move(p), {}, lay == layout::contiguous};
    if (!s.contiguous)
        s.dev = rt::device_buffer<std::int64_t>(s.host);
    return s;
}

kc::attention_positions positions(const side& q, const side& k) {
    kc::attention_positions p;
    p.q_pos = q.contiguous ? nullptr : q.dev.data();
    p.k_pos = k.contiguous ? nullptr : k.dev.data();
    p.q_first = q.host.front();
    p.k_first = k.host.front();
    return p;
}

std::size_t count_inf(const std::vector<float>& x) {
    std::size_t n = 0;
    for (const float v : x)
        n += std::isinf(v);
    return n;
}

// One mask with its device copies, and the parameters of the calls checked under it.
struct masked_call {
    std::shared_ptr<const attention_mask> mask;
    std::unique_ptr<dev_mask> dev;
    std::int64_t seq;
    attn_dtype dtype;
    int dim;
    layout lay;

    /// The shape with the mask (host arrays and their device copies).
    attention_shape shape(std::int64_t q_len, std::int64_t k_len) const {
        attention_shape s = make_shape(q_len, k_len, dim, mask->causal());
        s.mask = dev->view();
        return s;
    }
};

masked_call make_call(executor& exec, const mask_case& c, std::int64_t seq, attn_dtype dtype,
                      int dim, layout lay) {
    masked_call call{make_mask(c, seq), nullptr, seq, dtype, dim, lay};
    call.dev = std::make_unique<dev_mask>(exec, call.mask);
    return call;
}

// Each rank's queries against its own K/V block and then the other rank's, merged into one
// (O, LSE), against the reference of those queries over the whole sequence. Returns the rows
// that see no key at all.
std::size_t check_forward_ring(const masked_call& c) {
    const std::int64_t seq = c.seq;
    const attn_dtype dtype = c.dtype;
    const int dim = c.dim;
    const layout lay = c.lay;
    const attention_shape global = c.shape(seq, seq);
    const dev_input q = to_device(seeded(attention_q_elems(global), 61, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(global), 62, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(global), 63, 1.0f), dtype);
    const attention_shape s = c.shape(seq / ranks, seq / ranks);
    std::size_t unseen = 0;
    for (int rank = 0; rank < ranks; ++rank) {
        const side qs = side_of(lay, layout_positions(lay, seq, ranks, rank));
        std::vector<float> q_local(attention_q_elems(s));
        scatter_rows(q.rounded.data(), s.batch * s.heads, seq, dim, qs.host, q_local.data());
        attention_shape ref_shape = s;
        ref_shape.k_len = seq;
        const ref_fwd want =
            reference_fwd(ref_shape, q_local, k.rounded, v.rounded, qs.host, iota_pos(seq));
        unseen += count_inf(want.lse);

        const dev_input q_dev = to_device(q_local, dtype); // exact: already rounded
        rt::device_buffer<float> o(want.o.size()), lse(want.lse.size());
        kc::attention_fwd_init_cuda(s, o.data(), lse.data());
        for (int step = 0; step < ranks; ++step) {
            const side ks = side_of(
                lay, layout_positions(lay, seq, ranks, ring_source_rank(rank, step, ranks)));
            std::vector<float> k_blk(attention_kv_elems(s)), v_blk(k_blk.size());
            scatter_rows(k.rounded.data(), s.batch * s.kv_heads, seq, dim, ks.host, k_blk.data());
            scatter_rows(v.rounded.data(), s.batch * s.kv_heads, seq, dim, ks.host, v_blk.data());
            const dev_input dk = to_device(k_blk, dtype), dv = to_device(v_blk, dtype);
            kc::attention_fwd_cuda(s, dtype, q_dev.data.data(), dk.data.data(), dv.data.data(),
                                   positions(qs, ks), o.data(), lse.data());
            rt::device_synchronize(); // the block's buffers are freed at the end of the step
        }
        const std::string tag = "r" + std::to_string(rank);
        expect_close(o.to_host(), want.o, 2.0f * unit_roundoff(dtype) * max_abs(v.rounded),
                     tag + " O");
        expect_close(lse.to_host(), want.lse, 1e-3f, tag + " LSE");
    }
    std::printf("[   info   ] %zu rows see no key (LSE -inf)\n", unseen);
    return unseen;
}

// All queries against each rank's K/V block in turn, given the reference's final O and LSE:
// dQ accumulates over the blocks, each block's dK, dV land in its rows of the global gradient.
void check_backward_all_queries(const masked_call& c) {
    const std::int64_t seq = c.seq;
    const attn_dtype dtype = c.dtype;
    const int dim = c.dim;
    const layout lay = c.lay;
    const attention_shape global = c.shape(seq, seq);
    const pos_t all = iota_pos(seq);
    const dev_input q = to_device(seeded(attention_q_elems(global), 71, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(global), 72, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(global), 73, 1.0f), dtype);
    const dev_input d_o = to_device(seeded(attention_q_elems(global), 74, 1.0f), dtype);
    const ref_fwd fwd = reference_fwd(global, q.rounded, k.rounded, v.rounded, all, all);
    std::vector<float> dq_ref(q.rounded.size()), dk_ref(k.rounded.size()), dv_ref(dk_ref.size());
    attention_bwd_ref(global, q.rounded.data(), k.rounded.data(), v.rounded.data(),
                      d_o.rounded.data(), all.data(), all.data(), dq_ref.data(), dk_ref.data(),
                      dv_ref.data());

    attention_shape s = global;
    s.k_len = seq / ranks;
    const std::int64_t outer = s.batch * s.kv_heads;
    const side qs = side_of(lay, all);
    rt::device_buffer<float> o(fwd.o), lse(fwd.lse), delta(fwd.lse.size());
    rt::device_buffer<float> dq(std::vector<float>(dq_ref.size(), 0.0f));
    kc::attention_bwd_delta_cuda(global, dtype, o.data(), d_o.data.data(), delta.data());
    std::vector<float> dk_got(dk_ref.size()), dv_got(dv_ref.size());
    for (int r = 0; r < ranks; ++r) {
        const side ks = side_of(lay, layout_positions(lay, seq, ranks, r));
        std::vector<float> k_blk(attention_kv_elems(s)), v_blk(k_blk.size());
        scatter_rows(k.rounded.data(), outer, seq, dim, ks.host, k_blk.data());
        scatter_rows(v.rounded.data(), outer, seq, dim, ks.host, v_blk.data());
        const dev_input dk_in = to_device(k_blk, dtype), dv_in = to_device(v_blk, dtype);
        rt::device_buffer<float> dk(std::vector<float>(k_blk.size(), 0.0f)),
            dv(std::vector<float>(k_blk.size(), 0.0f));
        kc::attention_bwd_cuda(s, dtype, q.data.data(), dk_in.data.data(), dv_in.data.data(),
                               d_o.data.data(), lse.data(), delta.data(), positions(qs, ks),
                               dq.data(), dk.data(), dv.data());
        gather_rows(dk.to_host().data(), outer, seq, dim, ks.host, dk_got.data());
        gather_rows(dv.to_host().data(), outer, seq, dim, ks.host, dv_got.data());
    }
    const float u4 = 4.0f * unit_roundoff(dtype);
    expect_close(dq.to_host(), dq_ref, u4 * max_abs(dq_ref), "dQ");
    expect_close(dk_got, dk_ref, u4 * max_abs(dk_ref), "dK");
    expect_close(dv_got, dv_ref, u4 * max_abs(dv_ref), "dV");
}

// As a ring runs the backward: each rank's own queries (the layout's positions, zigzag and
// striped ones not a contiguous run) against every K/V block, with that rank's rows of the
// final O, LSE and dO. dQ accumulates over the blocks on the query's rank; a block's dK, dV
// accumulate over the ranks whose queries it met.
void check_backward_local_queries(const masked_call& c) {
    const std::int64_t seq = c.seq;
    const attn_dtype dtype = c.dtype;
    const int dim = c.dim;
    const layout lay = c.lay;
    const attention_shape global = c.shape(seq, seq);
    const pos_t all = iota_pos(seq);
    const dev_input q = to_device(seeded(attention_q_elems(global), 81, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(global), 82, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(global), 83, 1.0f), dtype);
    const dev_input d_o = to_device(seeded(attention_q_elems(global), 84, 1.0f), dtype);
    const ref_fwd fwd = reference_fwd(global, q.rounded, k.rounded, v.rounded, all, all);
    std::vector<float> dq_ref(q.rounded.size()), dk_ref(k.rounded.size()), dv_ref(dk_ref.size());
    attention_bwd_ref(global, q.rounded.data(), k.rounded.data(), v.rounded.data(),
                      d_o.rounded.data(), all.data(), all.data(), dq_ref.data(), dk_ref.data(),
                      dv_ref.data());

    const attention_shape s = c.shape(seq / ranks, seq / ranks);
    const std::int64_t q_outer = s.batch * s.heads, kv_outer = s.batch * s.kv_heads;
    std::vector<side> sides;
    std::vector<dev_input> k_blk, v_blk;
    std::vector<rt::device_buffer<float>> dk, dv;
    for (int r = 0; r < ranks; ++r) {
        sides.push_back(side_of(lay, layout_positions(lay, seq, ranks, r)));
        std::vector<float> kb(attention_kv_elems(s)), vb(kb.size());
        scatter_rows(k.rounded.data(), kv_outer, seq, dim, sides.back().host, kb.data());
        scatter_rows(v.rounded.data(), kv_outer, seq, dim, sides.back().host, vb.data());
        k_blk.push_back(to_device(kb, dtype));
        v_blk.push_back(to_device(vb, dtype));
        dk.emplace_back(std::vector<float>(kb.size(), 0.0f));
        dv.emplace_back(std::vector<float>(kb.size(), 0.0f));
    }
    std::vector<float> dq_got(dq_ref.size()), dk_got(dk_ref.size()), dv_got(dv_ref.size());
    for (int rank = 0; rank < ranks; ++rank) {
        const pos_t& qp = sides[static_cast<std::size_t>(rank)].host;
        std::vector<float> q_loc(attention_q_elems(s)), do_loc(q_loc.size()), o_loc(q_loc.size());
        std::vector<float> lse_loc(static_cast<std::size_t>(q_outer * s.q_len));
        scatter_rows(q.rounded.data(), q_outer, seq, dim, qp, q_loc.data());
        scatter_rows(d_o.rounded.data(), q_outer, seq, dim, qp, do_loc.data());
        scatter_rows(fwd.o.data(), q_outer, seq, dim, qp, o_loc.data());
        scatter_rows(fwd.lse.data(), q_outer, seq, 1, qp, lse_loc.data());
        const dev_input q_dev = to_device(q_loc, dtype), do_dev = to_device(do_loc, dtype);
        rt::device_buffer<float> o(o_loc), lse(lse_loc), delta(lse_loc.size());
        rt::device_buffer<float> dq(std::vector<float>(q_loc.size(), 0.0f));
        kc::attention_bwd_delta_cuda(s, dtype, o.data(), do_dev.data.data(), delta.data());
        for (int step = 0; step < ranks; ++step) {
            const auto src = static_cast<std::size_t>(ring_source_rank(rank, step, ranks));
            kc::attention_bwd_cuda(s, dtype, q_dev.data.data(), k_blk[src].data.data(),
                                   v_blk[src].data.data(), do_dev.data.data(), lse.data(),
                                   delta.data(),
                                   positions(sides[static_cast<std::size_t>(rank)], sides[src]),
                                   dq.data(), dk[src].data(), dv[src].data());
        }
        gather_rows(dq.to_host().data(), q_outer, seq, dim, qp, dq_got.data());
    }
    for (int r = 0; r < ranks; ++r) {
        const pos_t& kp = sides[static_cast<std::size_t>(r)].host;
        gather_rows(dk[static_cast<std::size_t>(r)].to_host().data(), kv_outer, seq, dim, kp,
                    dk_got.data());
        gather_rows(dv[static_cast<std::size_t>(r)].to_host().data(), kv_outer, seq, dim, kp,
                    dv_got.data());
    }
    const float u4 = 4.0f * unit_roundoff(dtype);
    expect_close(dq_got, dq_ref, u4 * max_abs(dq_ref), "dQ");
    expect_close(dk_got, dk_ref, u4 * max_abs(dk_ref), "dK");
    expect_close(dv_got, dv_ref, u4 * max_abs(dv_ref), "dV");
}

class gpu_attention_mask : public testing::TestWithParam<mask_param> {
  protected:
    void SetUp() override {
        RINGSCALE_SKIP_WITHOUT_DEVICE();
        const auto [m, dtype, dim, lay] = GetParam();
        m_exec = make_executor(ringscale::device_kind::cuda);
        m_call =
            std::make_unique<masked_call>(make_call(*m_exec, k_masks[m], k_seq, dtype, dim, lay));
    }

    std::unique_ptr<executor> m_exec;
    std::unique_ptr<masked_call> m_call;
};

} // namespace

TEST_P(gpu_attention_mask, forward_ring_matches_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const std::size_t unseen = check_forward_ring(*m_call);
    if (has_unseen_rows(k_masks[std::get<0>(GetParam())].name)) {
        EXPECT_GT(unseen, 0u); // the case exists to check those rows
    }
}

TEST_P(gpu_attention_mask, backward_ring_matches_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    check_backward_all_queries(*m_call);
}

TEST_P(gpu_attention_mask, backward_local_queries_match_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    check_backward_local_queries(*m_call);
}

INSTANTIATE_TEST_SUITE_P(
    kernels, gpu_attention_mask,
    testing::Combine(testing::Range(0, static_cast<int>(sizeof(k_masks) / sizeof(k_masks[0]))),
                     testing::Values(attn_dtype::bf16, attn_dtype::fp16), testing::Values(64, 128),
                     testing::Values(layout::zigzag, layout::striped, layout::contiguous)),
    param_name);

// Calls shorter than a tile (18 rows, 18 keys): one whole warp and one of 2 rows, the other
// warps idle, every key tile ragged.
TEST(gpu_attention_mask_tiny, calls_shorter_than_a_tile_match_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const auto exec = make_executor(ringscale::device_kind::cuda);
    std::size_t unseen = 0;
    for (const mask_case& mc : k_tiny_masks)
        for (const int dim : {64, 128})
            for (const layout lay : {layout::zigzag, layout::contiguous}) {
                SCOPED_TRACE(std::string(mc.name) + " d" + std::to_string(dim) + " " +
                             to_string(lay));
                const masked_call c = make_call(*exec, mc, 36, attn_dtype::bf16, dim, lay);
                unseen += check_forward_ring(c);
                check_backward_all_queries(c);
                check_backward_local_queries(c);
            }
    EXPECT_GT(unseen, 0u); // the dilation leaves rows with no visible key
}
