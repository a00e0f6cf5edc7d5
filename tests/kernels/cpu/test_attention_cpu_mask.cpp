// Masked attention (kernels/mask.hpp): the reference against a brute-force softmax over an
// explicit mask matrix built pair by pair, then the fast CPU kernels, forward and backward,
// against the reference for every rule, over K/V in several blocks merged as a ring does
// (with rows that see no key in a block, or in any block: O = 0, LSE = -inf). Tolerances as
// in test_attention_cpu.cpp: 2e-5 + 1e-4 * |ref|.
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_spec.hpp"
#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;
using namespace ringscale::kernels::reference;
using pos_t = std::vector<std::int64_t>;

namespace {

constexpr std::int64_t k_seq = 192, k_dim = 64;

struct problem {
    attention_shape s;
    std::vector<float> q, k, v, d_o;
};

problem make_problem(const attention_mask& mask, std::int64_t heads, std::int64_t kv_heads) {
    problem p;
    p.s.heads = heads;
    p.s.kv_heads = kv_heads;
    p.s.q_len = p.s.k_len = k_seq;
    p.s.head_dim = k_dim;
    p.s.causal = mask.causal();
    p.s.mask = mask.view();
    p.q.resize(attention_q_elems(p.s));
    p.k.resize(attention_kv_elems(p.s));
    p.v.resize(p.k.size());
    p.d_o.resize(p.q.size());
    fill_uniform(p.q.data(), p.q.size(), 41, 0, 2.0f);
    fill_uniform(p.k.data(), p.k.size(), 42, 0, 2.0f);
    fill_uniform(p.v.data(), p.v.size(), 43, 0);
    fill_uniform(p.d_o.data(), p.d_o.size(), 44, 0);
    return p;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                  const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const bool both_inf = std::isinf(want[i]) && got[i] == want[i];
        const float tol = 2e-5f + 1e-4f * std::fabs(want[i]);
        if (!both_inf && !(std::fabs(got[i] - want[i]) <= tol) && bad++ < 5)
            ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs ref " << want[i];
    }
    EXPECT_EQ(bad, 0u) << what;
}

// Softmax over an explicit [S, S] mask matrix, one head, in double: O and LSE.
void brute_forward(const problem& p, const std::vector<char>& visible, std::int64_t h,
                   std::vector<float>& o, std::vector<float>& lse) {
    const std::int64_t kvh = h / (p.s.heads / p.s.kv_heads);
    const double scale = 1.0 / std::sqrt(double(k_dim));
    for (std::int64_t i = 0; i < k_seq; ++i) {
        std::vector<double> w(k_seq, 0.0);
        double m = -INFINITY;
        for (std::int64_t j = 0; j < k_seq; ++j) {
            if (!visible[i * k_seq + j])
                continue;
            double dot = 0;
            for (std::int64_t d = 0; d < k_dim; ++d)
                dot +=
                    double(p.q[(h * k_seq + i) * k_dim + d]) * p.k[(kvh * k_seq + j) * k_dim + d];
            w[j] = dot * scale;
            m = std::max(m, w[j]);
        }
        double l = 0;
        std::vector<double> acc(k_dim, 0.0);
        for (std::int64_t j = 0; j < k_seq && m > -INFINITY; ++j) {
            if (!visible[i * k_seq + j])
                continue;
            const double e = std::exp(w[j] - m);
            l += e;
            for (std::int64_t d = 0; d < k_dim; ++d)
                acc[d] += e * p.v[(kvh * k_seq + j) * k_dim + d];
        }
        for (std::int64_t d = 0; d < k_dim; ++d)
            o[(h * k_seq + i) * k_dim + d] = l > 0 ? float(acc[d] / l) : 0.0f;
        lse[h * k_seq + i] = l > 0 ? float(m + std::log(l)) : -INFINITY;
    }
}

// The mask's cases: each rule alone and combined, causal or not.
struct mask_case {
    mask_spec spec;
    bool causal;
};

std::vector<mask_case> cases() {
    std::vector<mask_case> out;
    auto add = [&](bool causal, auto set) {
        mask_spec s;
        set(s);
        out.push_back({s, causal});
    };
    add(true, [](mask_spec& s) { s.window = 40; });
    add(false, [](mask_spec& s) { s.window = 17; });
    add(true, [](mask_spec& s) { s.docs = "50+30+100+12"; });
    add(false, [](mask_spec& s) { s.docs = "fixed:64"; });
    add(false, [](mask_spec& s) {
        s.sparsity = 0.6;
        s.block = 16;
    });
    add(true, [](mask_spec& s) {
        s.sparsity = 0.5;
        s.block = 32;
        s.pattern = "local_global";
    });
    add(false, [](mask_spec& s) {
        s.sparsity = 0.5;
        s.block = 24; // not a tile multiple: partial tiles test pair by pair
    });
    add(true, [](mask_spec& s) { s.dilation = "64:4+32:2"; }); // odd rows see no key
    add(true, [](mask_spec& s) {
        s.window = 60;
        s.docs = "fixed:48";
        s.sparsity = 0.3;
        s.block = 16;
    });
    return out;
}

// The fast forward over K/V split in `blocks` zigzag blocks merged in place, then the backward
// block by block with the final LSE: O, LSE, dQ, dK, dV of the whole problem.
struct result {
    std::vector<float> o, lse, dq, dk, dv;
};

result fast_blocks(const problem& p, int blocks, attention_tiles tiles) {
    attention_workspace ws;
    attention_workspace_reserve(ws, tiles);
    const pos_t qp = layout_positions(layout::contiguous, k_seq, 1, 0);
    attention_shape bs = p.s;
    bs.k_len = k_seq / blocks;
    const std::int64_t outer = p.s.kv_heads;
    result r{std::vector<float>(p.q.size()), std::vector<float>(p.s.heads * k_seq),
             std::vector<float>(p.q.size(), 0.0f), std::vector<float>(p.k.size()),
             std::vector<float>(p.k.size())};
    attention_fwd_init(p.s, r.o.data(), r.lse.data());
    std::vector<std::vector<float>> k(blocks), v(blocks);
    std::vector<pos_t> kp(blocks);
    for (int b = 0; b < blocks; ++b) {
        kp[b] = layout_positions(layout::zigzag, k_seq, blocks, b);
        k[b].resize(attention_kv_elems(bs));
        v[b].resize(k[b].size());
        scatter_rows(p.k.data(), outer, k_seq, k_dim, kp[b], k[b].data());
        scatter_rows(p.v.data(), outer, k_seq, k_dim, kp[b], v[b].data());
        attention_fwd_cpu(bs, p.q.data(), k[b].data(), v[b].data(), qp.data(), kp[b].data(),
                          r.o.data(), r.lse.data(), ws);
    }
    std::vector<float> delta(r.lse.size());
    attention_bwd_delta(p.s, r.o.data(), p.d_o.data(), delta.data());
    for (int b = 0; b < blocks; ++b) {
        std::vector<float> dk(k[b].size(), 0.0f), dv(k[b].size(), 0.0f);
        attention_bwd_cpu(bs, p.q.data(), k[b].data(), v[b].data(), p.d_o.data(), r.lse.data(),
                          delta.data(), qp.data(), kp[b].data(), r.dq.data(), dk.data(), dv.data(),
                          ws);
        gather_rows(dk.data(), outer, k_seq, k_dim, kp[b], r.dk.data());
        gather_rows(dv.data(), outer, k_seq, k_dim, kp[b], r.dv.data());
    }
    return r;
}

} // namespace

TEST(attention_mask, reference_equals_brute_force_over_the_mask_matrix) {
    const pos_t pos = layout_positions(layout::contiguous, k_seq, 1, 0);
    for (const mask_case& c : cases()) {
        const attention_mask mask(c.spec, k_seq, c.causal);
        const problem p = make_problem(mask, 2, 1);
        std::vector<char> visible(k_seq * k_seq);
        std::int64_t empty_rows = 0;
        for (std::int64_t i = 0; i < k_seq; ++i) {
            bool any = false;
            for (std::int64_t j = 0; j < k_seq; ++j) {
                // The rules' text: causal, window, documents, kept block, dilated segment.
                bool ok = !c.causal || j <= i;
                const std::int64_t w = c.spec.window;
                ok = ok && (w == 0 || (c.causal ? i - j < w : std::abs(i - j) < w));
                visible[i * k_seq + j] = ok && mask_visible(mask.view(), false, i, j);
                any = any || visible[i * k_seq + j];
            }
            empty_rows += !any;
        }
        std::vector<float> o(p.q.size()), lse(2 * k_seq), bo(o.size()), blse(lse.size());
        attention_fwd_ref(p.s, p.q.data(), p.k.data(), p.v.data(), pos.data(), pos.data(), o.data(),
                          lse.data());
        for (std::int64_t h = 0; h < 2; ++h)
            brute_forward(p, visible, h, bo, blse);
        expect_close(o, bo, c.spec.label() + " O");
        expect_close(lse, blse, c.spec.label() + " LSE");
        if (!c.spec.dilation.empty()) {
            EXPECT_GT(empty_rows, 0) << "the dilated case must test rows with no visible key";
        }
    }
}

TEST(attention_mask, cpu_forward_and_backward_match_the_reference) {
    const pos_t pos = layout_positions(layout::contiguous, k_seq, 1, 0);
    for (const mask_case& c : cases()) {
        const attention_mask mask(c.spec, k_seq, c.causal);
        const problem p = make_problem(mask, 4, 2);
        result want{std::vector<float>(p.q.size()), std::vector<float>(4 * k_seq),
                    std::vector<float>(p.q.size()), std::vector<float>(p.k.size()),
                    std::vector<float>(p.k.size())};
        attention_fwd_ref(p.s, p.q.data(), p.k.data(), p.v.data(), pos.data(), pos.data(),
                          want.o.data(), want.lse.data());
        attention_bwd_ref(p.s, p.q.data(), p.k.data(), p.v.data(), p.d_o.data(), pos.data(),
                          pos.data(), want.dq.data(), want.dk.data(), want.dv.data());
        for (const int blocks : {1, 3})
            for (const attention_tiles tiles : {attention_tiles{32, 32}, attention_tiles{64, 48}}) {
                const result got = fast_blocks(p, blocks, tiles);
                const std::string what = c.spec.label() + (c.causal ? " causal" : "") + " blocks " +
                                         std::to_string(blocks) + " tiles " +
                                         std::to_string(tiles.q_tile);
                expect_close(got.o, want.o, what + " O");
                expect_close(got.lse, want.lse, what + " LSE");
                expect_close(got.dq, want.dq, what + " dQ");
                expect_close(got.dk, want.dk, what + " dK");
                expect_close(got.dv, want.dv, what + " dV");
            }
    }
}
