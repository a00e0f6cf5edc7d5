// fp8 attention through cuDNN as the attention jobs run it (--dtype fp8 --attn-kernel cudnn):
// a ring of P = 4 steps on one GPU through the kernels' own dispatch with E4M3 inputs
// (elem::e4m3, stored as E4M3 of s·x with the current per-tensor scales, read with the
// shape's descales), each call's E4M3 O merged in fp32, against the double reference on the
// inputs as read; and the ring's backward (cuDNN's fp8 backward per call from the final O
// and LSE, E4M3 dO at its current scale, each call's E4M3 dQ, dK, dV added in fp32), run three
// times (the first two calibrate the outputs' scales) and the third checked. Skips, saying
// why, without a device, without cuDNN or below compute capability 9.0.
//
// Tolerances, fixed before the first run (kernels/cudnn_fp8.hpp, jobs/README.md):
//   O:   |O - O_ref| <= 4u * max|V|, u = 2^-4 (0.25 max|V|);
//   LSE: |LSE - LSE_ref| <= 0.05 (test_cudnn_gpu.cpp's fp8 bound; the scores are exact
//        products of E4M3 values summed in fp32);
//   dQ, dK, dV: |g - g_ref| <= 6u * max|g_ref| (0.375 max|g_ref|, cudnn_fp8_grad_tolerance).
#include "kernels/attention_path.hpp"
#include "kernels/cudnn_fp8.hpp"
#include "kernels/elem.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layout.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "tests/kernels/cuda/attention_gpu_support.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::test_attention;

namespace {

// x as the GPU reads it: E4M3 of scale·x, over scale.
std::vector<float> as_read(const std::vector<float>& x, float scale) {
    std::vector<float> seen(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        seen[i] = round_to(elem::e4m3, x[i] * scale) / scale;
    return seen;
}

struct ring_out {
    std::vector<float> o, lse; // every rank's rows, in rank order
};

// P ranks' rings one after another on this GPU: Q, K, V as stored, global [B, H|Hkv, S, D].
ring_out run_ring(layout lay, const attention_shape& g, std::int64_t seq,
                  const std::vector<float>& q8, const std::vector<float>& k8,
                  const std::vector<float>& v8, const cudnn_fp8_scales& f) {
    const int ranks = 4;
    set_attention_path(attn_path::cudnn);
    auto exec = make_executor(ringscale::device_kind::cuda);
    ring_out out;
    for (int r = 0; r < ranks; ++r) {
        const pos_t qp = layout_positions(lay, seq, ranks, r);
        const auto n = static_cast<std::int64_t>(qp.size());
        attention_shape s = g;
        s.q_len = s.k_len = n;
        s.descale_q = f.descale_q;
        s.descale_k = f.descale_k;
        s.descale_v = f.descale_v;
        std::vector<float> ql(static_cast<std::size_t>(g.batch * g.heads * n * g.head_dim));
        scatter_rows(q8.data(), g.batch * g.heads, seq, g.head_dim, qp, ql.data());
        std::vector<std::uint8_t> qb(ql.size());
        elem_encode(elem::e4m3, ql.data(), qb.data(), qb.size());
        const rt::device_buffer<std::uint8_t> qd(qb);
        rt::device_buffer<float> o(ql.size()), lse(static_cast<std::size_t>(g.batch * g.heads * n));
        attention_fwd_init(*exec, s, o.data(), lse.data());
        const dev_positions dqp(*exec, qp);
        for (int step = 0; step < ranks; ++step) {
            const pos_t kp = layout_positions(lay, seq, ranks, ring_source_rank(r, step, ranks));
            std::vector<float> kl(static_cast<std::size_t>(g.batch * g.kv_heads * n * g.head_dim));
            std::vector<float> vl(kl.size());
            scatter_rows(k8.data(), g.batch * g.kv_heads, seq, g.head_dim, kp, kl.data());
            scatter_rows(v8.data(), g.batch * g.kv_heads, seq, g.head_dim, kp, vl.data());
            std::vector<std::uint8_t> kb(kl.size()), vb(vl.size());
            elem_encode(elem::e4m3, kl.data(), kb.data(), kb.size());
            elem_encode(elem::e4m3, vl.data(), vb.data(), vb.size());
            const rt::device_buffer<std::uint8_t> kd(kb), vd(vb);
            const dev_positions dkp(*exec, kp);
            attention_fwd(*exec, s, elem::e4m3, qd.data(), kd.data(), vd.data(), dqp.view(),
                          dkp.view(), o.data(), lse.data(), attention_split::whole, {});
        }
        exec->synchronize();
        const auto oh = o.to_host(), lh = lse.to_host();
        out.o.insert(out.o.end(), oh.begin(), oh.end());
        out.lse.insert(out.lse.end(), lh.begin(), lh.end());
    }
    set_attention_path(attn_path::automatic);
    return out;
}

// The scaled values (E4M3 of scale·x) of every element: what the ring encodes.
std::vector<float> scaled_values(const std::vector<float>& seen, float scale) {
    std::vector<float> out(seen.size());
    for (std::size_t i = 0; i < seen.size(); ++i)
        out[i] = round_to(elem::e4m3, seen[i] * scale);
    return out;
}

// E4M3 bytes of scaled values on the device.
rt::device_buffer<std::uint8_t> encoded(const std::vector<float>& scaled) {
    std::vector<std::uint8_t> b(scaled.size());
    elem_encode(elem::e4m3, scaled.data(), b.data(), b.size());
    return rt::device_buffer<std::uint8_t>(b);
}

// One case's global tensors (as stored: scaled E4M3 values) and the reference's O and LSE.
struct bwd_case {
    attention_shape g;
    std::int64_t seq = 0;
    std::vector<float> q8, k8, v8, do8, o, lse;
    float descale_do = 1;
};

struct ring_grads {
    std::vector<float> dq, dk, dv; // global
};

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

std::vector<float> rows(const std::vector<float>& x, std::int64_t outer, std::int64_t seq,
                        std::int64_t dim, const pos_t& p) {
    std::vector<float> out(static_cast<std::size_t>(outer) * p.size() * dim);
    scatter_rows(x.data(), outer, seq, dim, p, out.data());
    return out;
}

// Rank r's backward from the final O and LSE: one attention_bwd per ring step.
void rank_backward(executor& exec, const bwd_case& c, layout lay, int r, const cudnn_fp8_scales& f,
                   ring_grads& out) {
    const std::int64_t seq = c.seq, dim = c.g.head_dim, bh = c.g.batch * c.g.heads,
                       bkv = c.g.batch * c.g.kv_heads;
    const pos_t qp = layout_positions(lay, seq, 4, r);
    attention_shape s = c.g;
    s.q_len = s.k_len = static_cast<std::int64_t>(qp.size());
    s.descale_q = f.descale_q;
    s.descale_k = f.descale_k;
    s.descale_v = f.descale_v;
    s.descale_do = c.descale_do;
    const auto qd = encoded(rows(c.q8, bh, seq, dim, qp));
    const auto dod = encoded(rows(c.do8, bh, seq, dim, qp));
    rt::device_buffer<float> o(rows(c.o, bh, seq, dim, qp)), lse(rows(c.lse, bh, seq, 1, qp));
    rt::device_buffer<float> delta(lse.size()), dq(o.size());
    const dev_positions dqp(exec, qp);
    attention_bwd_delta(exec, s, elem::e4m3, o.data(), dod.data(), delta.data());
    exec.zero(dq.data(), dq.size() * sizeof(float));
    for (int step = 0; step < 4; ++step) {
        const pos_t kp = layout_positions(lay, seq, 4, ring_source_rank(r, step, 4));
        const auto kd = encoded(rows(c.k8, bkv, seq, dim, kp));
        const auto vd = encoded(rows(c.v8, bkv, seq, dim, kp));
        rt::device_buffer<float> dk(kd.size()), dv(vd.size());
        exec.zero(dk.data(), dk.size() * sizeof(float));
        exec.zero(dv.data(), dv.size() * sizeof(float));
        const dev_positions dkp(exec, kp);
        attention_bwd(exec, s, elem::e4m3, qd.data(), kd.data(), vd.data(), dod.data(), lse.data(),
                      delta.data(), dqp.view(), dkp.view(), dq.data(), dk.data(), dv.data(),
                      attention_split::whole, {});
        exec.synchronize();
        add_rows(dk.to_host(), bkv, seq, dim, kp, out.dk);
        add_rows(dv.to_host(), bkv, seq, dim, kp, out.dv);
    }
    exec.synchronize();
    add_rows(dq.to_host(), bh, seq, dim, qp, out.dq);
}

// The P = 4 ring's backward, run three times on the same inputs; the third run's gradients.
ring_grads run_ring_bwd(layout lay, const bwd_case& c, const cudnn_fp8_scales& f) {
    set_attention_path(attn_path::cudnn);
    auto exec = make_executor(ringscale::device_kind::cuda);
    ring_grads out;
    for (int run = 0; run < 3; ++run) {
        out = {std::vector<float>(c.q8.size()), std::vector<float>(c.k8.size()),
               std::vector<float>(c.v8.size())};
        for (int r = 0; r < 4; ++r)
            rank_backward(*exec, c, lay, r, f, out);
    }
    set_attention_path(attn_path::automatic);
    return out;
}

void expect_grad(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    expect_close(got, want, static_cast<float>(cudnn_fp8_grad_tolerance(max_abs(want))), what);
}

} // namespace

TEST(cudnn_fp8_ring_gpu, the_ring_matches_the_reference_on_the_inputs_as_read) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    if (!cudnn_compiled())
        GTEST_SKIP() << "this ringscale was built without cuDNN";
    int major = 0;
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    if (major < 9)
        GTEST_SKIP() << "cuDNN's fp8 attention needs compute capability 9.0 or newer";
    const std::int64_t seq = 512, dim = 128;
    for (const layout lay : {layout::contiguous, layout::zigzag})
        for (const bool causal : {true, false}) {
            SCOPED_TRACE(std::string(to_string(lay)) + (causal ? " causal" : ""));
            const attention_shape g = make_shape(seq, seq, dim, causal);
            const auto qx = seeded(attention_q_elems(g), 31, 2.0f);
            const auto kx = seeded(attention_kv_elems(g), 32, 2.0f);
            const auto vx = seeded(attention_kv_elems(g), 33, 1.0f);
            const cudnn_fp8_scales f =
                cudnn_fp8_current_scales(max_abs(qx), max_abs(kx), max_abs(vx));
            const auto q = as_read(qx, f.scale_q), k = as_read(kx, f.scale_k),
                       v = as_read(vx, f.scale_v);
            const ring_out got =
                run_ring(lay, g, seq, scaled_values(q, f.scale_q), scaled_values(k, f.scale_k),
                         scaled_values(v, f.scale_v), f);
            const auto all = iota_pos(seq);
            const ref_fwd full = reference_fwd(g, q, k, v, all, all);
            ring_out want;
            for (int r = 0; r < 4; ++r) {
                const pos_t p = layout_positions(lay, seq, 4, r);
                std::vector<float> o(static_cast<std::size_t>(g.batch * g.heads) * p.size() * dim),
                    l(static_cast<std::size_t>(g.batch * g.heads) * p.size());
                scatter_rows(full.o.data(), g.batch * g.heads, seq, dim, p, o.data());
                scatter_rows(full.lse.data(), g.batch * g.heads, seq, 1, p, l.data());
                want.o.insert(want.o.end(), o.begin(), o.end());
                want.lse.insert(want.lse.end(), l.begin(), l.end());
            }
            expect_close(got.o, want.o, static_cast<float>(cudnn_fp8_o_tolerance(max_abs(v))),
                         "fp8 ring O");
            expect_close(got.lse, want.lse, 0.05f, "fp8 ring LSE");
        }
}

TEST(cudnn_fp8_ring_gpu, the_ring_backward_matches_the_reference_on_the_inputs_as_read) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    if (!cudnn_compiled())
        GTEST_SKIP() << "this ringscale was built without cuDNN";
    int major = 0;
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    if (major < 9)
        GTEST_SKIP() << "cuDNN's fp8 attention needs compute capability 9.0 or newer";
    const std::int64_t seq = 512, dim = 128; // cuDNN's fp8 backward on Hopper: D = 128
    for (const layout lay : {layout::contiguous, layout::zigzag})
        for (const bool causal : {true, false}) {
            SCOPED_TRACE(std::string(to_string(lay)) + (causal ? " causal" : ""));
            bwd_case c;
            c.g = make_shape(seq, seq, dim, causal);
            c.seq = seq;
            const auto qx = seeded(attention_q_elems(c.g), 41, 2.0f);
            const auto kx = seeded(attention_kv_elems(c.g), 42, 2.0f);
            const auto vx = seeded(attention_kv_elems(c.g), 43, 1.0f);
            const auto dox = seeded(attention_q_elems(c.g), 44, 1.0f);
            const cudnn_fp8_scales f =
                cudnn_fp8_current_scales(max_abs(qx), max_abs(kx), max_abs(vx));
            const float scale_do = cudnn_fp8_scale(max_abs(dox));
            c.descale_do = 1 / scale_do;
            const auto q = as_read(qx, f.scale_q), k = as_read(kx, f.scale_k),
                       v = as_read(vx, f.scale_v), d_o = as_read(dox, scale_do);
            c.q8 = scaled_values(q, f.scale_q);
            c.k8 = scaled_values(k, f.scale_k);
            c.v8 = scaled_values(v, f.scale_v);
            c.do8 = scaled_values(d_o, scale_do);
            const auto all = iota_pos(seq);
            const ref_fwd full = reference_fwd(c.g, q, k, v, all, all);
            c.o = full.o;
            c.lse = full.lse;
            std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
            reference::attention_bwd_ref(c.g, q.data(), k.data(), v.data(), d_o.data(), all.data(),
                                         all.data(), dq.data(), dk.data(), dv.data());
            const ring_grads got = run_ring_bwd(lay, c, f);
            expect_grad(got.dq, dq, "fp8 ring dQ");
            expect_grad(got.dk, dk, "fp8 ring dK");
            expect_grad(got.dv, dv, "fp8 ring dV");
        }
}
