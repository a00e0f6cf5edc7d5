// fp8 attention through cuDNN as the attention jobs run it (--dtype fp8 --attn-kernel cudnn):
// a ring of P = 4 steps on one GPU through the kernels' own dispatch with E4M3 inputs
// (elem::e4m3, stored as E4M3 of s·x with the current per-tensor scales, read with the
// shape's descales), each call's E4M3 O merged in fp32, against the double reference on the
// inputs as read. Skips, saying why, without a device, without cuDNN or below compute
// capability 9.0.
//
// Tolerances, fixed before the first run (kernels/cudnn_fp8.hpp, jobs/README.md):
//   O:   |O - O_ref| <= 4u * max|V|, u = 2^-4 (0.25 max|V|);
//   LSE: |LSE - LSE_ref| <= 0.05 (test_cudnn_gpu.cpp's fp8 bound; the scores are exact
//        products of E4M3 values summed in fp32).
#include "kernels/attention_path.hpp"
#include "kernels/cudnn_fp8.hpp"
#include "kernels/elem.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layout.hpp"
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
