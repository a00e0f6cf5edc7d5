// cuDNN's softmax statistics in a ring (kernels/cudnn_plan.hpp's tensor views), no GPU: a
// stand-in for cuDNN computes each planned call exactly as cuDNN defines it (its band, the
// piece of Q/K/V its views address, natural-log stats [B, H, q_len, 1] written through the
// stats view) and the ring's own merge (kernels/softmax_merge.hpp) of every step must give the
// unsharded reference's O and LSE, rows that see no key included (LSE -inf, O 0).
#include "kernels/cudnn_plan.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_count.hpp"
#include "kernels/mask_layout.hpp"
#include "kernels/mask_spec.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "kernels/softmax_merge.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace ringscale::kernels;

namespace {

std::int64_t at(const cudnn_tensor_view& v, std::int64_t b, std::int64_t h, std::int64_t s,
                std::int64_t d) {
    return v.offset + b * v.strides[0] + h * v.strides[1] + s * v.strides[2] + d * v.strides[3];
}

// One call as cuDNN computes it: O_step through the Q view, stats through the stats view.
void sdpa_standin(const attention_shape& sh, const cudnn_call& c, const std::vector<float>& q,
                  const std::vector<float>& k, const std::vector<float>& v, std::vector<float>& o,
                  std::vector<float>& stats) {
    const auto qv = cudnn_q_view(sh, c), kv = cudnn_kv_view(sh, c), sv = cudnn_stats_view(sh, c);
    const std::int64_t group = sh.heads / sh.kv_heads;
    const double scale = attention_scale(sh);
    for (std::int64_t b = 0; b < qv.dims[0]; ++b)
        for (std::int64_t h = 0; h < qv.dims[1]; ++h)
            for (std::int64_t i = 0; i < qv.dims[2]; ++i) {
                std::vector<double> p(static_cast<std::size_t>(c.k_len), 0.0);
                double most = -INFINITY, sum = 0;
                for (std::int64_t j = 0; j < c.k_len; ++j) {
                    if (!cudnn_band_keeps(c.band, c.q_len, c.k_len, i, j))
                        continue;
                    double dot = 0;
                    for (std::int64_t d = 0; d < sh.head_dim; ++d)
                        dot += double(q[at(qv, b, h, i, d)]) * k[at(kv, b, h / group, j, d)];
                    p[static_cast<std::size_t>(j)] = dot * scale;
                    most = std::max(most, dot * scale);
                }
                for (std::int64_t j = 0; j < c.k_len; ++j)
                    if (cudnn_band_keeps(c.band, c.q_len, c.k_len, i, j))
                        sum += std::exp(p[static_cast<std::size_t>(j)] - most);
                stats[static_cast<std::size_t>(at(sv, b, h, i, 0))] = float(most + std::log(sum));
                for (std::int64_t d = 0; d < sh.head_dim; ++d) {
                    double acc = 0;
                    for (std::int64_t j = 0; j < c.k_len; ++j)
                        if (cudnn_band_keeps(c.band, c.q_len, c.k_len, i, j))
                            acc += std::exp(p[static_cast<std::size_t>(j)] - most) *
                                   v[at(kv, b, h / group, j, d)];
                    o[at(qv, b, h, i, d)] = float(acc / sum);
                }
            }
}

std::vector<float> rows_of(const std::vector<float>& global, std::int64_t outer, std::int64_t seq,
                           std::int64_t dim, const std::vector<std::int64_t>& pos) {
    std::vector<float> out(static_cast<std::size_t>(outer) * pos.size() * dim);
    scatter_rows(global.data(), outer, seq, dim, pos, out.data());
    return out;
}

// Ring forward of every rank through the stand-in and the merge, against the reference.
void check_merge(layout lay, int ranks, const mask_spec& spec, bool causal) {
    const std::int64_t seq = 32 * ranks, batch = 2, heads = 4, kv_heads = 2, dim = 8;
    const attention_mask mask(spec, seq, causal);
    std::mt19937 gen(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> q(batch * heads * seq * dim), k(batch * kv_heads * seq * dim), v(k.size());
    for (auto* t : {&q, &k, &v})
        for (float& x : *t)
            x = nd(gen);
    attention_shape full{batch, heads, kv_heads, seq, seq, dim, causal, 0.0f, mask.view()};
    std::vector<float> o_ref(q.size()), lse_ref(batch * heads * seq);
    const auto all = all_positions(seq);
    reference::attention_fwd_ref(full, q.data(), k.data(), v.data(), all.data(), all.data(),
                                 o_ref.data(), lse_ref.data());
    const auto pos = mask_layout_positions(lay, seq, ranks, causal, spec.any() ? &mask : nullptr);
    for (int r = 0; r < ranks; ++r) {
        const auto& qp = pos[static_cast<std::size_t>(r)];
        const auto n = static_cast<std::int64_t>(qp.size());
        const auto ql = rows_of(q, batch * heads, seq, dim, qp);
        std::vector<float> o(ql.size()), lse(batch * heads * n);
        softmax_merge_init(o.data(), lse.data(), batch * heads * n, dim);
        for (int s = 0; s < ranks; ++s) {
            const auto& kp = pos[static_cast<std::size_t>(ring_source_rank(r, s, ranks))];
            const auto kl = rows_of(k, batch * kv_heads, seq, dim, kp);
            const auto vl = rows_of(v, batch * kv_heads, seq, dim, kp);
            const auto plan = plan_cudnn_step(qp, kp, causal, mask.view());
            ASSERT_EQ(plan.fallback, "");
            attention_shape sh{batch, heads, kv_heads, n, n, dim, causal, 0.0f, {}};
            for (const cudnn_call& c : plan.calls) {
                // The step's own buffers: rows outside the call stay "no key seen".
                std::vector<float> o_step(o.size(), 0.0f);
                std::vector<float> lse_step(lse.size(), -std::numeric_limits<float>::infinity());
                sdpa_standin(sh, c, ql, kl, vl, o_step, lse_step);
                softmax_merge_into(o.data(), lse.data(), o_step.data(), lse_step.data(),
                                   batch * heads * n, dim);
            }
        }
        const auto o_want = rows_of(o_ref, batch * heads, seq, dim, qp);
        const auto lse_want = rows_of(lse_ref, batch * heads, seq, 1, qp);
        for (std::size_t i = 0; i < lse.size(); ++i) {
            if (std::isinf(lse_want[i]))
                EXPECT_EQ(lse[i], lse_want[i]) << "row " << i;
            else
                EXPECT_NEAR(lse[i], lse_want[i], 1e-4) << "row " << i;
        }
        for (std::size_t i = 0; i < o.size(); ++i)
            EXPECT_NEAR(o[i], o_want[i], 1e-4) << "element " << i;
    }
}

} // namespace

TEST(cudnn_stats, views_address_our_bhsd_tensors_in_place) {
    const attention_shape sh{2, 8, 2, 100, 60, 64, true, 0.0f, {}};
    const cudnn_call c{10, 20, 5, 30, {}};
    const auto qv = cudnn_q_view(sh, c), kv = cudnn_kv_view(sh, c), sv = cudnn_stats_view(sh, c);
    EXPECT_EQ(qv.dims[2], 20);
    EXPECT_EQ(qv.strides[0], 8 * 100 * 64);
    EXPECT_EQ(qv.strides[1], 100 * 64);
    EXPECT_EQ(qv.offset, 10 * 64);
    EXPECT_EQ(kv.dims[1], 2); // GQA: cuDNN's own K/V head count
    EXPECT_EQ(kv.strides[1], 60 * 64);
    EXPECT_EQ(kv.offset, 5 * 64);
    EXPECT_EQ(sv.dims[3], 1);
    EXPECT_EQ(sv.strides[1], 100);
    EXPECT_EQ(sv.offset, 10);
}

TEST(cudnn_stats, natural_log_stats_merge_to_the_unsharded_result) {
    mask_spec none, window, docs;
    window.window = 11;
    docs.docs = "fixed:16"; // 2P-divisible for P up to 8
    for (const layout lay : {layout::contiguous, layout::zigzag, layout::striped, layout::balanced})
        for (const int ranks : {2, 3, 4})
            for (const bool causal : {true, false})
                for (const mask_spec* m : {&none, &window, &docs}) {
                    if (lay == layout::zigzag && m == &docs && 16 % (2 * ranks) != 0)
                        continue; // zigzag per document needs 2P | document length
                    SCOPED_TRACE(std::string(to_string(lay)) + " P=" + std::to_string(ranks) +
                                 (causal ? " causal " : " ") + m->label());
                    check_merge(lay, ranks, *m, causal);
                }
}

// A window that leaves rows of a step with no key: those rows keep LSE -inf and O 0 after
// the merge, as the reference has them for rows with no visible key (none here: a causal
// window always sees the query itself), and no call covers them.
TEST(cudnn_stats, rows_that_see_no_key_are_in_no_call) {
    const std::vector<std::int64_t> a{0, 1, 2, 3, 4, 5, 6, 7}, b{8, 9, 10, 11, 12, 13, 14, 15};
    mask_view w;
    w.window = 3;
    const auto plan = plan_cudnn_step(b, a, true, w);
    ASSERT_EQ(plan.calls.size(), 1u);
    EXPECT_EQ(plan.calls[0].q_len, 2); // queries 10..15 see no key of this block
}
