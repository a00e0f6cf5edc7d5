// The ring backward as cuDNN runs it (kernels/cuda/cudnn_attention.cpp, attention_bwd_cudnn),
// emulated on the host in double: every rank's steps planned as the forward plans them
// (plan_cudnn_step), each call's backward on its piece alone from the FINAL merged O and LSE
// (P = exp(score - LSE), delta = rowsum(dO * O), as TransformerEngine's ring), its dQ rows
// [q0, q0 + q_len) and dK, dV rows [k0, k0 + k_len) added into the step's gradients, and the
// sums compared with the reference backward of the unsharded attention: the bands a backward
// step runs and the accumulation plan give the whole gradient, each cell once. Every layout,
// P = 2, 3, 4, causal, window and documents, GQA.
#include "kernels/cudnn_plan.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_layout.hpp"
#include "kernels/mask_spec.hpp"
#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace ringscale::kernels;
using pos_t = std::vector<std::int64_t>;

namespace {

// Global tensors [B=1, H, S, D] (K/V [1, Hkv, S, D]) and the final forward.
struct problem {
    attention_shape g;
    std::vector<float> q, k, v, d_o, o, lse;
    std::vector<double> delta;
};

pos_t iota(std::int64_t n) {
    pos_t a(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        a[static_cast<std::size_t>(i)] = i;
    return a;
}

std::size_t at(std::int64_t head, std::int64_t seq, std::int64_t row, std::int64_t dim,
               std::int64_t d) {
    return static_cast<std::size_t>((head * seq + row) * dim + d);
}

// One call's backward on the host (its piece alone, the final LSE and delta), added into the
// global gradients at the rows the call's pieces occupy. q, k: the step's global positions.
void call_backward(const problem& p, const cudnn_call& c, const pos_t& q, const pos_t& k,
                   std::vector<double>& dq, std::vector<double>& dk, std::vector<double>& dv) {
    const attention_shape& g = p.g;
    const std::int64_t s = g.q_len, dim = g.head_dim, group = g.heads / g.kv_heads;
    const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
    for (std::int64_t h = 0; h < g.heads; ++h)
        for (std::int64_t i = 0; i < c.q_len; ++i) {
            const std::int64_t qi = q[static_cast<std::size_t>(c.q0 + i)];
            const auto row = static_cast<std::size_t>(h * s + qi);
            for (std::int64_t j = 0; j < c.k_len; ++j) {
                if (!cudnn_band_keeps(c.band, c.q_len, c.k_len, i, j))
                    continue;
                const std::int64_t kj = k[static_cast<std::size_t>(c.k0 + j)], kh = h / group;
                double score = 0, dp = 0;
                for (std::int64_t d = 0; d < dim; ++d) {
                    score += double(p.q[at(h, s, qi, dim, d)]) * p.k[at(kh, s, kj, dim, d)];
                    dp += double(p.d_o[at(h, s, qi, dim, d)]) * p.v[at(kh, s, kj, dim, d)];
                }
                const double pr = std::exp(score * scale - p.lse[row]);
                const double ds = pr * (dp - p.delta[row]) * scale;
                for (std::int64_t d = 0; d < dim; ++d) {
                    dq[at(h, s, qi, dim, d)] += ds * p.k[at(kh, s, kj, dim, d)];
                    dk[at(kh, s, kj, dim, d)] += ds * p.q[at(h, s, qi, dim, d)];
                    dv[at(kh, s, kj, dim, d)] += pr * p.d_o[at(h, s, qi, dim, d)];
                }
            }
        }
}

problem make_problem(std::int64_t seq, bool causal, const attention_mask& mask) {
    problem p;
    p.g.batch = 1;
    p.g.heads = 4;
    p.g.kv_heads = 2;
    p.g.q_len = p.g.k_len = seq;
    p.g.head_dim = 8;
    p.g.causal = causal;
    p.g.mask = mask.view();
    const auto qn = static_cast<std::size_t>(attention_q_elems(p.g));
    const auto kn = static_cast<std::size_t>(attention_kv_elems(p.g));
    p.q.resize(qn);
    p.d_o.resize(qn);
    p.o.resize(qn);
    p.k.resize(kn);
    p.v.resize(kn);
    fill_uniform(p.q.data(), qn, 41, 0, 2.0f);
    fill_uniform(p.k.data(), kn, 42, 0, 2.0f);
    fill_uniform(p.v.data(), kn, 43, 0, 1.0f);
    fill_uniform(p.d_o.data(), qn, 44, 0, 1.0f);
    p.lse.resize(static_cast<std::size_t>(p.g.heads * seq));
    const pos_t all = iota(seq);
    reference::attention_fwd_ref(p.g, p.q.data(), p.k.data(), p.v.data(), all.data(), all.data(),
                                 p.o.data(), p.lse.data());
    p.delta.assign(p.lse.size(), 0.0);
    for (std::size_t r = 0; r < p.delta.size(); ++r)
        for (std::int64_t d = 0; d < p.g.head_dim; ++d) {
            const auto x = r * static_cast<std::size_t>(p.g.head_dim) + static_cast<std::size_t>(d);
            p.delta[r] += double(p.o[x]) * p.d_o[x];
        }
    return p;
}

std::int64_t count_off(const std::vector<double>& got, const std::vector<float>& want) {
    float peak = 0;
    for (const float w : want)
        peak = std::max(peak, std::fabs(w));
    std::int64_t off = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        off += std::fabs(got[i] - want[i]) > 1e-4 * peak + 1e-6;
    return off;
}

void check_ring(layout lay, int ranks, bool causal, const mask_spec& spec) {
    const std::int64_t seq = 48 * ranks;
    const attention_mask mask(spec, seq, causal);
    const problem p = make_problem(seq, causal, mask);
    const auto pos = mask_layout_positions(lay, seq, ranks, causal, spec.any() ? &mask : nullptr);
    std::vector<double> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
    for (int r = 0; r < ranks; ++r)
        for (int step = 0; step < ranks; ++step) {
            const pos_t& q = pos[static_cast<std::size_t>(r)];
            const pos_t& k = pos[static_cast<std::size_t>(ring_source_rank(r, step, ranks))];
            const cudnn_step_plan plan = plan_cudnn_step(q, k, causal, p.g.mask);
            ASSERT_EQ(plan.fallback, "");
            for (const cudnn_call& c : plan.calls)
                call_backward(p, c, q, k, dq, dk, dv);
        }
    const pos_t all = iota(seq);
    std::vector<float> wq(p.q.size()), wk(p.k.size()), wv(p.v.size());
    reference::attention_bwd_ref(p.g, p.q.data(), p.k.data(), p.v.data(), p.d_o.data(), all.data(),
                                 all.data(), wq.data(), wk.data(), wv.data());
    EXPECT_EQ(count_off(dq, wq), 0) << "dQ";
    EXPECT_EQ(count_off(dk, wk), 0) << "dK";
    EXPECT_EQ(count_off(dv, wv), 0) << "dV";
}

} // namespace

TEST(cudnn_backward, ring_calls_from_the_final_lse_sum_to_the_reference_gradients) {
    mask_spec none, window, docs;
    window.window = 37;
    docs.docs = "fixed:48";
    for (const layout lay : {layout::contiguous, layout::zigzag, layout::striped, layout::balanced})
        for (const int ranks : {2, 3, 4})
            for (const mask_spec* m : {&none, &window, &docs})
                for (const bool causal : {true, false}) {
                    SCOPED_TRACE(std::string(to_string(lay)) + " P=" + std::to_string(ranks) + " " +
                                 m->label() + (causal ? " causal" : ""));
                    check_ring(lay, ranks, causal, *m);
                }
}
