// cuDNN fused attention (kernels/cudnn_sdpa.hpp) against the double reference on seeded inputs
// rounded to the input type, and a ring of P = 4 steps on one GPU through the kernels' own
// dispatch (--attn-kernel cudnn: plan, calls, fp32 merge) in every layout and mask cuDNN takes,
// against the reference and against our own kernels. Every test skips without a device.
//
// Tolerances, fixed before the first run (u: unit roundoff of the input type, bf16 2^-8,
// fp16 2^-11; cuDNN rounds P to the input type and accumulates in fp32, as our kernels):
//   O:  |O - O_ref| <= 4u * max|V| (cuDNN's O is written in the input type: u more than ours);
//   LSE: |LSE - LSE_ref| <= 1e-3 (-inf exact, rows that see no key);
//   dQ, dK, dV: |g - g_ref| <= 8u * max|g_ref| (dQ, dK, dV written in the input type);
//   ring vs our kernels: the sum of both kernels' O bounds;
//   fp8 (E4M3, u = 2^-4, current per-tensor scaling): |O - O_ref| <= 0.25 * max|V|.
#include "kernels/attention_path.hpp"
#include "kernels/cudnn_sdpa.hpp"
#include "kernels/dev_mask.hpp"
#include "kernels/elem.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_layout.hpp"
#include "kernels/mask_spec.hpp"
#include "src/base/error.hpp"
#include "tests/kernels/cuda/attention_gpu_support.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::test_attention;

namespace {

attn_dtype_kind kind_of(attn_dtype t) {
    return t == attn_dtype::bf16 ? attn_dtype_kind::bf16 : attn_dtype_kind::fp16;
}

elem elem_of(attn_dtype t) {
    return t == attn_dtype::bf16 ? elem::bf16 : elem::f16;
}

std::vector<float> widen(attn_dtype t, const rt::device_buffer<std::uint16_t>& x) {
    rt::device_buffer<float> f(x.size());
    kc::from_attn_dtype_cuda(t, x.size(), x.data(), f.data());
    return f.to_host();
}

// One cuDNN call over a whole q_len x k_len block at positions 0.., causal or not.
struct one_call {
    attention_shape s;
    cudnn_call call;
};

one_call whole(std::int64_t n, std::int64_t dim, bool causal) {
    one_call c{make_shape(n, n, dim, causal), {}};
    const auto plan = plan_cudnn_step(iota_pos(n), iota_pos(n), causal, {});
    EXPECT_EQ(plan.calls.size(), 1u);
    c.call = plan.calls.at(0);
    return c;
}

class cudnn_gpu : public testing::TestWithParam<std::tuple<attn_dtype, int, bool>> {
  protected:
    void SetUp() override {
        RINGSCALE_SKIP_WITHOUT_DEVICE();
        if (!cudnn_compiled())
            GTEST_SKIP() << "this ringscale was built without cuDNN";
    }
};

} // namespace

TEST_P(cudnn_gpu, forward_matches_reference) {
    const auto [dtype, dim, causal] = GetParam();
    const one_call c = whole(200, dim, causal);
    const dev_input q = to_device(seeded(attention_q_elems(c.s), 1, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(c.s), 2, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(c.s), 3, 1.0f), dtype);
    const ref_fwd want =
        reference_fwd(c.s, q.rounded, k.rounded, v.rounded, iota_pos(200), iota_pos(200));
    rt::device_buffer<std::uint16_t> o(want.o.size());
    rt::device_buffer<float> lse(want.lse.size());
    kc::cudnn_sdpa_fwd({c.s, kind_of(dtype), c.call},
                       {q.data.data(), k.data.data(), v.data.data(), o.data(), lse.data()},
                       nullptr);
    expect_close(widen(dtype, o), want.o, 4 * unit_roundoff(dtype) * max_abs(v.rounded), "O");
    expect_close(lse.to_host(), want.lse, 1e-3f, "LSE");
    // The same shape again: no second graph.
    const auto before = kc::cudnn_graph_cache_stats().builds;
    kc::cudnn_sdpa_fwd({c.s, kind_of(dtype), c.call},
                       {q.data.data(), k.data.data(), v.data.data(), o.data(), lse.data()},
                       nullptr);
    EXPECT_EQ(kc::cudnn_graph_cache_stats().builds, before);
}

TEST_P(cudnn_gpu, backward_matches_reference) {
    const auto [dtype, dim, causal] = GetParam();
    const one_call c = whole(160, dim, causal);
    const dev_input q = to_device(seeded(attention_q_elems(c.s), 4, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(c.s), 5, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(c.s), 6, 1.0f), dtype);
    const dev_input d_o = to_device(seeded(attention_q_elems(c.s), 7, 1.0f), dtype);
    const pos_t p = iota_pos(160);
    const ref_fwd fwd = reference_fwd(c.s, q.rounded, k.rounded, v.rounded, p, p);
    std::vector<float> dq(q.rounded.size()), dk(k.rounded.size()), dv(v.rounded.size());
    attention_bwd_ref(c.s, q.rounded.data(), k.rounded.data(), v.rounded.data(), d_o.rounded.data(),
                      p.data(), p.data(), dq.data(), dk.data(), dv.data());
    const dev_input o = to_device(fwd.o, dtype); // the final O, in the input type (as TE)
    rt::device_buffer<float> lse(fwd.lse);
    rt::device_buffer<std::uint16_t> gq(dq.size()), gk(dk.size()), gv(dv.size());
    kc::cudnn_sdpa_bwd({c.s, kind_of(dtype), c.call},
                       {q.data.data(), k.data.data(), v.data.data(), o.data.data(), d_o.data.data(),
                        lse.data(), gq.data(), gk.data(), gv.data()},
                       nullptr);
    const float u8 = 8 * unit_roundoff(dtype);
    expect_close(widen(dtype, gq), dq, u8 * max_abs(dq), "dQ");
    expect_close(widen(dtype, gk), dk, u8 * max_abs(dk), "dK");
    expect_close(widen(dtype, gv), dv, u8 * max_abs(dv), "dV");
}

INSTANTIATE_TEST_SUITE_P(all, cudnn_gpu,
                         testing::Combine(testing::Values(attn_dtype::bf16, attn_dtype::fp16),
                                          testing::Values(64, 128), testing::Bool()));

namespace {

struct ring_result {
    std::vector<float> o, lse; // every rank's rows, in rank order
};

// P ranks' rings run one after another on this GPU through the kernels' dispatch.
ring_result run_ring(attn_path path, layout lay, const mask_spec& spec, bool causal,
                     std::int64_t seq, const std::vector<float>& q, const std::vector<float>& k,
                     const std::vector<float>& v, attention_shape g, attn_dtype dtype) {
    const int ranks = 4;
    const auto mask = std::make_shared<const attention_mask>(spec, seq, causal);
    const auto pos =
        mask_layout_positions(lay, seq, ranks, causal, spec.any() ? mask.get() : nullptr);
    set_attention_path(path);
    auto exec = make_executor(ringscale::device_kind::cuda);
    const dev_mask dm(*exec, mask);
    ring_result out;
    for (int r = 0; r < ranks; ++r) {
        const auto& qp = pos[static_cast<std::size_t>(r)];
        const auto n = static_cast<std::int64_t>(qp.size());
        attention_shape s = g;
        s.q_len = s.k_len = n;
        s.mask = dm.view();
        std::vector<float> ql(static_cast<std::size_t>(g.batch * g.heads * n * g.head_dim));
        scatter_rows(q.data(), g.batch * g.heads, seq, g.head_dim, qp, ql.data());
        const dev_input qd = to_device(ql, dtype);
        rt::device_buffer<float> o(ql.size()), lse(static_cast<std::size_t>(g.batch * g.heads * n));
        attention_fwd_init(*exec, s, o.data(), lse.data());
        const dev_positions dqp(*exec, qp);
        for (int step = 0; step < ranks; ++step) {
            const auto& kp = pos[static_cast<std::size_t>(ring_source_rank(r, step, ranks))];
            std::vector<float> kl(static_cast<std::size_t>(g.batch * g.kv_heads * n * g.head_dim));
            std::vector<float> vl(kl.size());
            scatter_rows(k.data(), g.batch * g.kv_heads, seq, g.head_dim, kp, kl.data());
            scatter_rows(v.data(), g.batch * g.kv_heads, seq, g.head_dim, kp, vl.data());
            const dev_input kd = to_device(kl, dtype), vd = to_device(vl, dtype);
            const dev_positions dkp(*exec, kp);
            attention_fwd(*exec, s, elem_of(dtype), qd.data.data(), kd.data.data(), vd.data.data(),
                          dqp.view(), dkp.view(), o.data(), lse.data(), attention_split::whole, {});
        }
        exec->synchronize();
        const auto oh = o.to_host(), lh = lse.to_host();
        out.o.insert(out.o.end(), oh.begin(), oh.end());
        out.lse.insert(out.lse.end(), lh.begin(), lh.end());
    }
    set_attention_path(attn_path::automatic);
    return out;
}

} // namespace

// The whole ring through cuDNN (each step's calls merged in fp32) against the reference and
// against our own kernels (auto: sm90 on an H100/H200, sm80 elsewhere).
TEST(cudnn_gpu_ring, every_layout_and_mask_matches_reference_and_our_kernels) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    if (!cudnn_compiled())
        GTEST_SKIP() << "this ringscale was built without cuDNN";
    const std::int64_t seq = 512, dim = 128;
    const attn_dtype dtype = attn_dtype::bf16;
    mask_spec none, window, docs;
    window.window = 100;
    docs.docs = "fixed:128";
    for (const layout lay : {layout::contiguous, layout::zigzag, layout::striped, layout::balanced})
        for (const mask_spec* m : {&none, &window, &docs})
            for (const bool causal : {true, false}) {
                SCOPED_TRACE(std::string(to_string(lay)) + " " + m->label() +
                             (causal ? " causal" : ""));
                attention_shape g = make_shape(seq, seq, dim, causal);
                const dev_input q = to_device(seeded(attention_q_elems(g), 11, 2.0f), dtype);
                const dev_input k = to_device(seeded(attention_kv_elems(g), 12, 2.0f), dtype);
                const dev_input v = to_device(seeded(attention_kv_elems(g), 13, 1.0f), dtype);
                const ring_result c = run_ring(attn_path::cudnn, lay, *m, causal, seq, q.rounded,
                                               k.rounded, v.rounded, g, dtype);
                const ring_result ours = run_ring(attn_path::automatic, lay, *m, causal, seq,
                                                  q.rounded, k.rounded, v.rounded, g, dtype);
                // The reference in the ranks' row order.
                const attention_mask mask(*m, seq, causal);
                g.mask = mask.view();
                const auto all = iota_pos(seq);
                const ref_fwd full = reference_fwd(g, q.rounded, k.rounded, v.rounded, all, all);
                const auto pos =
                    mask_layout_positions(lay, seq, 4, causal, m->any() ? &mask : nullptr);
                ring_result want;
                for (const auto& p : pos) {
                    std::vector<float> o(static_cast<std::size_t>(g.batch * g.heads) * p.size() *
                                         dim),
                        l(static_cast<std::size_t>(g.batch * g.heads) * p.size());
                    scatter_rows(full.o.data(), g.batch * g.heads, seq, dim, p, o.data());
                    scatter_rows(full.lse.data(), g.batch * g.heads, seq, 1, p, l.data());
                    want.o.insert(want.o.end(), o.begin(), o.end());
                    want.lse.insert(want.lse.end(), l.begin(), l.end());
                }
                const float tol = 4 * unit_roundoff(dtype) * max_abs(v.rounded);
                expect_close(c.o, want.o, tol, "O vs reference");
                expect_close(c.lse, want.lse, 1e-3f, "LSE vs reference");
                expect_close(c.o, ours.o, tol + 2 * unit_roundoff(dtype) * max_abs(v.rounded),
                             "O vs ours");
            }
}

namespace {

// E4M3 bits of a value round_to_fp8 gave (sign, 4 exponent bits with bias 7, 3 mantissa bits;
// exponent field 0: subnormals of 2^-9).
std::uint8_t e4m3_bits(float x) {
    const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
    const float a = std::fabs(x);
    if (a < 0x1p-6f)
        return static_cast<std::uint8_t>(sign | static_cast<int>(a * 0x1p9f));
    int e = 0;
    const float m = std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
    const int field = e - 1 + 7, mant = static_cast<int>((m * 2 - 1) * 8);
    return static_cast<std::uint8_t>(sign | field << 3 | mant);
}

// x * scale rounded to E4M3 (the values the GPU reads, divided back by scale in `seen`).
rt::device_buffer<std::uint8_t> to_fp8(const std::vector<float>& x, float scale,
                                       std::vector<float>& seen) {
    std::vector<std::uint8_t> bits(x.size());
    seen.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float r = round_to_fp8(fp8_format::e4m3, x[i] * scale);
        bits[i] = e4m3_bits(r);
        seen[i] = r / scale;
    }
    return rt::device_buffer<std::uint8_t>(bits);
}

float current_scale(const std::vector<float>& x) {
    return fp8_max(fp8_format::e4m3) / max_abs(x);
}

} // namespace

// fp8 forward (Hopper and up), current per-tensor scaling: each input scaled by
// 448 / amax, P by 448 (it lies in [0, 1]), O by 448 / amax(O_ref); cuDNN returns the amax
// it saw.
TEST(cudnn_gpu_fp8, forward_matches_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    if (!cudnn_compiled())
        GTEST_SKIP() << "this ringscale was built without cuDNN";
    int major = 0;
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    if (major < 9)
        GTEST_SKIP() << "cuDNN's fp8 attention needs compute capability 9.0 or newer";
    for (const bool causal : {true, false}) {
        const one_call c = whole(256, 128, causal);
        std::vector<float> q, k, v;
        const auto qh = seeded(attention_q_elems(c.s), 21, 2.0f);
        const auto kh = seeded(attention_kv_elems(c.s), 22, 2.0f);
        const auto vh = seeded(attention_kv_elems(c.s), 23, 1.0f);
        const float sq = current_scale(qh), sk = current_scale(kh), sv = current_scale(vh);
        const auto q8 = to_fp8(qh, sq, q), k8 = to_fp8(kh, sk, k), v8 = to_fp8(vh, sv, v);
        const pos_t p = iota_pos(256);
        const ref_fwd want = reference_fwd(c.s, q, k, v, p, p);
        const float so = current_scale(want.o), ss = fp8_max(fp8_format::e4m3);
        rt::device_buffer<float> scalars(
            std::vector<float>{1 / sq, 1 / sk, 1 / sv, 1 / ss, ss, so, 0, 0});
        float* d = scalars.data();
        rt::device_buffer<std::uint8_t> o(want.o.size());
        rt::device_buffer<float> lse(want.lse.size());
        kc::cudnn_sdpa_fwd({c.s, attn_dtype_kind::fp8, c.call},
                           {q8.data(), k8.data(), v8.data(), o.data(), lse.data(), d, d + 1, d + 2,
                            d + 3, d + 4, d + 5, d + 6, d + 7},
                           nullptr);
        std::vector<float> got(want.o.size());
        const auto ob = o.to_host();
        for (std::size_t i = 0; i < got.size(); ++i) {
            const std::uint8_t b = ob[i];
            const int field = (b >> 3) & 15, mant = b & 7;
            const float mag = field == 0 ? mant * 0x1p-9f : std::ldexp(1 + mant / 8.0f, field - 7);
            got[i] = ((b & 0x80) ? -mag : mag) / so;
        }
        expect_close(got, want.o, 0.25f * max_abs(v), causal ? "fp8 O causal" : "fp8 O");
        expect_close(lse.to_host(), want.lse, 0.05f, "fp8 LSE");
        const auto amax = scalars.to_host();
        EXPECT_GT(amax[7], 0.0f) << "amax of O";
    }
}
