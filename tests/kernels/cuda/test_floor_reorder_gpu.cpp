// The numerics floor's reorders on the GPU (train_step --numerics on --device cuda), against the
// CPU executor's on the same inputs and seeds (so the same random blocks and row orders):
//  - the single-rank attention core with reorder_keys: key blocks (and in the backward query
//    blocks) gathered by the executor's copies and added back by its add kernel, on each
//    attention path this GPU runs (sm80, sm90, cuDNN);
//  - the GEMM backward with the floor's row order: x's and dy's rows taken (take_rows), dx's put
//    back (put_rows), in fp32 and around the bf16 cuBLASLt GEMMs.
// Tolerances, fixed before any GPU ran them (u = 2^-8, bf16; attention_gpu_support.hpp's bounds,
// doubled for the blocks' extra merges): O within 4u max|V|, LSE within 2e-3, dQ, dK, dV within
// 8u of their largest element; the GEMMs' dx, dW, db within 1e-4 of their largest element (both
// sides multiply the same operands with fp32 accumulation). A wrong gather, add-back or put-back
// moves values by O(max). Skips, with the reason, without a GPU.
#include "kernels/attention_path.hpp"
#include "kernels/model/attention_core.hpp"
#include "kernels/model/train_context.hpp"
#include "src/base/error.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;
using testing_support::seeded;

namespace {

constexpr float u_bf16 = 0x1p-8f;

float max_abs(const std::vector<float>& v) {
    float m = 0;
    for (float x : v)
        m = std::isfinite(x) ? std::max(m, std::fabs(x)) : m;
    return m;
}

std::vector<float> bf16_values(std::vector<float> v) { // what both sides read
    for (float& x : v)
        x = round_to_bf16(x);
    return v;
}

struct attention_out {
    std::vector<float> o, lse, dq, dkv;
};

// Two forward and backward calls (new blocks each) of the core on `exec`, with floor seed `seed`.
attention_out run_core(executor& exec, const attention_shape& s, std::uint64_t seed,
                       const std::vector<float>& q, const std::vector<float>& kv,
                       const std::vector<float>& d_o) {
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    std::vector<std::int64_t> pos(static_cast<std::size_t>(s.q_len));
    std::iota(pos.begin(), pos.end(), 0);
    dev_buffer<float> qd(exec, q), kvd(exec, kv), dod(exec, d_o), o(exec, qe),
        lse(exec, qe / static_cast<std::size_t>(s.head_dim)), dq(exec, qe), dkv(exec, kv.size());
    local_attention_core core(exec, pos);
    core.reorder_keys(seed);
    phase_timer timer;
    for (int call = 0; call < 2; ++call) {
        core.forward(s, qd.data(), kvd.data(), o.data(), lse.data(), timer);
        core.backward(s, qd.data(), kvd.data(), o.data(), dod.data(), lse.data(), dq.data(),
                      dkv.data(), timer);
    }
    exec.finish_iteration(timer);
    return {o.download(), lse.download(), dq.download(), dkv.download()};
}

class gpu_floor_attention : public testing::TestWithParam<attn_path> {
  protected:
    void SetUp() override {
        RINGSCALE_SKIP_WITHOUT_DEVICE();
        set_attention_path(GetParam());
        try {
            resolve_attention_path(0);
        } catch (const config_error& e) {
            GTEST_SKIP() << "path " << to_string(GetParam()) << " cannot run here: " << e.what();
        }
    }
    void TearDown() override { set_attention_path(attn_path::automatic); }
};

} // namespace

// Grouped-query heads (each slab's rows gathered on its own), 96 rows cut at seeded points.
TEST_P(gpu_floor_attention, the_reordered_core_matches_the_cpu_executors) {
    attention_shape s;
    s.batch = 2;
    s.heads = 4;
    s.kv_heads = 2;
    s.q_len = s.k_len = 96;
    s.head_dim = 64;
    s.causal = true;
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const auto q = bf16_values(seeded(qe, 31)), kv = bf16_values(seeded(2 * kve, 32)),
               d_o = bf16_values(seeded(qe, 33));
    const auto gpu = make_executor(device_kind::cuda);
    const auto cpu = make_executor(device_kind::cpu);
    const attention_out want = run_core(*cpu, s, 7, q, kv, d_o);
    const attention_out got = run_core(*gpu, s, 7, q, kv, d_o);
    testing_support::expect_close(got.o, want.o, 4 * u_bf16 * max_abs(kv), 0.0f, "O");
    testing_support::expect_close(got.lse, want.lse, 2e-3f, 0.0f, "LSE");
    testing_support::expect_close(got.dq, want.dq, 8 * u_bf16 * max_abs(want.dq), 0.0f, "dQ");
    testing_support::expect_close(got.dkv, want.dkv, 8 * u_bf16 * max_abs(want.dkv), 0.0f, "dK|dV");
}

INSTANTIATE_TEST_SUITE_P(paths, gpu_floor_attention,
                         testing::Values(attn_path::sm80, attn_path::sm90, attn_path::cudnn),
                         [](const testing::TestParamInfo<attn_path>& i) {
                             return std::string(to_string(i.param));
                         });

namespace {

struct gemm_out {
    std::vector<float> dx, dw, db;
};

// One GEMM backward on `exec` in `dtype` with the floor's row order of `seed` (0: none).
gemm_out run_gemm_bwd(executor& exec, train_dtype dtype, std::uint64_t seed, const linear_shape& s,
                      const std::vector<float>& x, const std::vector<float>& w,
                      const std::vector<float>& dy) {
    train_context ctx(exec, false);
    precision_config p;
    p.dtype = dtype;
    ctx.precision_state().configure(p, 1);
    ctx.precision_state().set_floor_reorder(seed);
    dev_buffer<float> xd(exec, x), wd(exec, w), dyd(exec, dy), dx(exec, x.size()),
        dw(exec, std::vector<float>(w.size(), 0.5f)), db(exec, std::vector<float>(s.out, 0.25f));
    ctx.gemm_bwd(0, s, xd.data(), wd.data(), dyd.data(), dx.data(), dw.data(), db.data());
    exec.synchronize();
    return {dx.download(), dw.download(), db.download()};
}

} // namespace

TEST(gpu_floor_gemm, the_reordered_backward_matches_the_cpu_executors) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const linear_shape s{96, 128, 64};
    const auto x = seeded(s.tokens * s.in, 41), w = seeded(s.out * s.in, 42),
               dy = seeded(s.tokens * s.out, 43);
    const auto gpu = make_executor(device_kind::cuda);
    const auto cpu = make_executor(device_kind::cpu);
    for (train_dtype t : {train_dtype::fp32, train_dtype::bf16}) {
        const char* name = train_dtype_name(t);
        SCOPED_TRACE(name);
        const gemm_out want = run_gemm_bwd(*cpu, t, 5, s, x, w, dy);
        const gemm_out got = run_gemm_bwd(*gpu, t, 5, s, x, w, dy);
        const gemm_out plain = run_gemm_bwd(*gpu, t, 0, s, x, w, dy);
        testing_support::expect_close(got.dx, want.dx, 1e-4f * max_abs(want.dx), 0.0f, "dx");
        testing_support::expect_close(got.dw, want.dw, 1e-4f * max_abs(want.dw), 0.0f, "dW");
        testing_support::expect_close(got.db, want.db, 1e-4f * max_abs(want.db), 0.0f, "db");
        // dx's rows put back where they belong: the GPU's own unreordered backward.
        testing_support::expect_close(got.dx, plain.dx, 1e-4f * max_abs(plain.dx), 0.0f,
                                      "dx against the unreordered GPU backward");
    }
}
