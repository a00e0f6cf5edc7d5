// The ring's attention backward through cuDNN (--attn-kernel cudnn: each step's calls from the
// final O and LSE, their dQ, dK, dV added in fp32) on one GPU, P = 4 ranks one after another
// through the kernels' own dispatch, in every layout and mask cuDNN takes, against the double
// reference and against our own kernels (auto: sm90 on an H100/H200 where it takes the mask,
// sm80 elsewhere). Every rank starts from the reference's final O and LSE, so both kernels
// see the same inputs. Skips without a device or without cuDNN.
//
// Tolerances, fixed before the first run (u: unit roundoff of the input type, bf16 2^-8,
// fp16 2^-11): one cuDNN call's gradients are within 8u * max|g_ref| (test_cudnn_gpu.cpp); in
// the ring each call's piece is rounded to the input type before the fp32 sum and cuDNN reads
// O rounded to the input type, so
//   dQ, dK, dV vs the reference: |g - g_ref| <= 16u * max|g_ref|;
//   vs our kernels: 16u + 4u (our kernels' own bound) times max|g_ref|.
#include "kernels/attention_path.hpp"
#include "kernels/cudnn_sdpa.hpp"
#include "kernels/dev_mask.hpp"
#include "kernels/elem.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_layout.hpp"
#include "kernels/mask_spec.hpp"
#include "tests/kernels/cuda/attention_gpu_support.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::test_attention;

namespace {

constexpr int ranks = 4;

// The inputs of one case, global [outer, seq, D], values as the device holds them.
struct ring_case {
    attention_shape g;
    std::vector<float> q, k, v, d_o, o, lse;
    attn_dtype dtype = attn_dtype::bf16;
};

struct grads {
    std::vector<float> dq, dk, dv; // global, [B, H | Hkv, seq, D]
};

std::vector<float> rows_of(const std::vector<float>& x, std::int64_t outer, std::int64_t seq,
                           std::int64_t dim, const pos_t& p) {
    std::vector<float> out(static_cast<std::size_t>(outer) * p.size() * dim);
    scatter_rows(x.data(), outer, seq, dim, p, out.data());
    return out;
}

// local [outer, p.size(), dim] added into rows p of global [outer, seq, dim].
void add_rows(const std::vector<float>& local, std::int64_t outer, std::int64_t seq,
              std::int64_t dim, const pos_t& p, std::vector<float>& global) {
    const auto n = static_cast<std::int64_t>(p.size());
    for (std::int64_t b = 0; b < outer; ++b)
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t d = 0; d < dim; ++d)
                global[static_cast<std::size_t>((b * seq + p[static_cast<std::size_t>(i)]) * dim +
                                                d)] +=
                    local[static_cast<std::size_t>((b * n + i) * dim + d)];
}

// Rank r's backward: delta from (O, dO), then one attention_bwd per ring step.
void rank_backward(executor& exec, const ring_case& c, const attention_shape& s,
                   const std::vector<pos_t>& pos, int r, grads& out) {
    const attention_shape& g = c.g;
    const std::int64_t seq = g.q_len, dim = g.head_dim, bh = g.batch * g.heads,
                       bkv = g.batch * g.kv_heads;
    const pos_t& qp = pos[static_cast<std::size_t>(r)];
    const elem e = c.dtype == attn_dtype::bf16 ? elem::bf16 : elem::f16;
    const dev_input q = to_device(rows_of(c.q, bh, seq, dim, qp), c.dtype);
    const dev_input d_o = to_device(rows_of(c.d_o, bh, seq, dim, qp), c.dtype);
    rt::device_buffer<float> o(rows_of(c.o, bh, seq, dim, qp));
    rt::device_buffer<float> lse(rows_of(c.lse, bh, seq, 1, qp));
    rt::device_buffer<float> delta(lse.size()), dq(o.size());
    const dev_positions dqp(exec, qp);
    attention_bwd_delta(exec, s, e, o.data(), d_o.data.data(), delta.data());
    exec.zero(dq.data(), dq.size() * sizeof(float));
    for (int step = 0; step < ranks; ++step) {
        const pos_t& kp = pos[static_cast<std::size_t>(ring_source_rank(r, step, ranks))];
        const dev_input k = to_device(rows_of(c.k, bkv, seq, dim, kp), c.dtype);
        const dev_input v = to_device(rows_of(c.v, bkv, seq, dim, kp), c.dtype);
        rt::device_buffer<float> dk(k.rounded.size()), dv(v.rounded.size());
        exec.zero(dk.data(), dk.size() * sizeof(float));
        exec.zero(dv.data(), dv.size() * sizeof(float));
        const dev_positions dkp(exec, kp);
        attention_bwd(exec, s, e, q.data.data(), k.data.data(), v.data.data(), d_o.data.data(),
                      lse.data(), delta.data(), dqp.view(), dkp.view(), dq.data(), dk.data(),
                      dv.data(), attention_split::whole, {});
        exec.synchronize();
        add_rows(dk.to_host(), bkv, seq, dim, kp, out.dk);
        add_rows(dv.to_host(), bkv, seq, dim, kp, out.dv);
    }
    exec.synchronize();
    add_rows(dq.to_host(), bh, seq, dim, qp, out.dq);
}

grads run_ring_bwd(attn_path path, layout lay, const mask_spec& spec, const ring_case& c) {
    const std::int64_t seq = c.g.q_len;
    const auto mask = std::make_shared<const attention_mask>(spec, seq, c.g.causal);
    const auto pos =
        mask_layout_positions(lay, seq, ranks, c.g.causal, spec.any() ? mask.get() : nullptr);
    set_attention_path(path);
    auto exec = make_executor(ringscale::device_kind::cuda);
    const dev_mask dm(*exec, mask);
    grads out{std::vector<float>(c.q.size()), std::vector<float>(c.k.size()),
              std::vector<float>(c.v.size())};
    for (int r = 0; r < ranks; ++r) {
        attention_shape s = c.g;
        s.q_len = s.k_len = static_cast<std::int64_t>(pos[static_cast<std::size_t>(r)].size());
        s.mask = dm.view();
        rank_backward(*exec, c, s, pos, r, out);
    }
    set_attention_path(attn_path::automatic);
    return out;
}

ring_case make_case(const attention_mask& mask, bool causal, attn_dtype dtype) {
    const std::int64_t seq = 512;
    ring_case c;
    c.dtype = dtype;
    c.g = make_shape(seq, seq, 128, causal);
    c.q = to_device(seeded(attention_q_elems(c.g), 31, 2.0f), dtype).rounded;
    c.k = to_device(seeded(attention_kv_elems(c.g), 32, 2.0f), dtype).rounded;
    c.v = to_device(seeded(attention_kv_elems(c.g), 33, 1.0f), dtype).rounded;
    c.d_o = to_device(seeded(attention_q_elems(c.g), 34, 1.0f), dtype).rounded;
    c.g.mask = mask.view();
    const pos_t all = iota_pos(seq);
    const ref_fwd f = reference_fwd(c.g, c.q, c.k, c.v, all, all);
    c.o = f.o;
    c.lse = f.lse;
    return c;
}

void check_case(layout lay, const mask_spec& m, bool causal, attn_dtype dtype) {
    const attention_mask mask(m, 512, causal);
    const ring_case c = make_case(mask, causal, dtype);
    const pos_t all = iota_pos(c.g.q_len);
    grads want{std::vector<float>(c.q.size()), std::vector<float>(c.k.size()),
               std::vector<float>(c.v.size())};
    attention_bwd_ref(c.g, c.q.data(), c.k.data(), c.v.data(), c.d_o.data(), all.data(), all.data(),
                      want.dq.data(), want.dk.data(), want.dv.data());
    const grads got = run_ring_bwd(attn_path::cudnn, lay, m, c);
    const grads ours = run_ring_bwd(attn_path::automatic, lay, m, c);
    const float u = unit_roundoff(dtype);
    const std::pair<const char*, std::pair<const std::vector<float>*, const std::vector<float>*>>
        parts[] = {
            {"dQ", {&got.dq, &want.dq}}, {"dK", {&got.dk, &want.dk}}, {"dV", {&got.dv, &want.dv}}};
    const std::vector<float>* mine[] = {&ours.dq, &ours.dk, &ours.dv};
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& [name, gw] = parts[i];
        const float scale = max_abs(*gw.second);
        expect_close(*gw.first, *gw.second, 16 * u * scale, std::string(name) + " vs reference");
        expect_close(*gw.first, *mine[i], 20 * u * scale, std::string(name) + " vs ours");
    }
}

} // namespace

TEST(cudnn_gpu_ring_bwd, every_layout_and_mask_matches_reference_and_our_kernels) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    if (!cudnn_compiled())
        GTEST_SKIP() << "this ringscale was built without cuDNN";
    mask_spec none, window, docs;
    window.window = 100;
    docs.docs = "fixed:128";
    for (const layout lay : {layout::contiguous, layout::zigzag, layout::striped, layout::balanced})
        for (const mask_spec* m : {&none, &window, &docs})
            for (const bool causal : {true, false}) {
                SCOPED_TRACE(std::string(to_string(lay)) + " " + m->label() +
                             (causal ? " causal" : ""));
                check_case(lay, *m, causal, attn_dtype::bf16);
            }
}

TEST(cudnn_gpu_ring_bwd, fp16_zigzag_causal_matches_reference_and_our_kernels) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    if (!cudnn_compiled())
        GTEST_SKIP() << "this ringscale was built without cuDNN";
    check_case(layout::zigzag, mask_spec{}, true, attn_dtype::fp16);
}
