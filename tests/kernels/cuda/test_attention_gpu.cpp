// CUDA attention kernels (forward, delta, backward) against the double reference
// (kernels/attention_ref.hpp) on seeded inputs first rounded to bf16 / fp16, so the reference
// sees exactly the values the kernels read. Every test skips without a device.
//
// Tolerances and helpers: tests/kernels/cuda/attention_gpu_support.hpp.
//
// The kernel tests run once per attention path (attention_path.hpp): sm80 (mma.sync) and
// sm90 (wgmma + TMA; skipped, saying why, unless this build has sm_90a and the GPU is 9.0).
#include "kernels/attention_path.hpp"
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/layout.hpp"
#include "src/base/error.hpp"
#include "tests/kernels/cuda/attention_gpu_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;
using namespace ringscale::test_attention;

namespace ringscale::kernels::cuda {
// Test names show the dtype by name ("GetParam() = (bf16, 64, true)").
void PrintTo(attn_dtype dtype, std::ostream* os) {
    *os << to_string(dtype);
}
void PrintTo(attn_path path, std::ostream* os) {
    *os << to_string(path);
}
} // namespace ringscale::kernels::cuda

namespace {

/// (dtype, head_dim, causal, path) for the parameterised tests, named e.g.
/// bf16_d128_causal_sm90.
using fwd_case = std::tuple<attn_dtype, int, bool, ringscale::kernels::attn_path>;

std::string case_name(const testing::TestParamInfo<fwd_case>& info) {
    const auto [dtype, dim, causal, path] = info.param;
    return std::string(kc::to_string(dtype)) + "_d" + std::to_string(dim) +
           (causal ? "_causal_" : "_full_") + ringscale::kernels::to_string(path);
}

/// Runs each test on its path: skips (saying why) where the path cannot run, restores the
/// automatic choice afterwards.
class gpu_attention : public testing::TestWithParam<fwd_case> {
  protected:
    void SetUp() override {
        RINGSCALE_SKIP_WITHOUT_DEVICE();
        const ringscale::kernels::attn_path path = std::get<3>(GetParam());
        ringscale::kernels::set_attention_path(path);
        try {
            ringscale::kernels::resolve_attention_path(0);
        } catch (const ringscale::config_error& e) {
            GTEST_SKIP() << "path " << ringscale::kernels::to_string(path)
                         << " cannot run here: " << e.what();
        }
    }
    void TearDown() override {
        ringscale::kernels::set_attention_path(ringscale::kernels::attn_path::automatic);
    }
};

} // namespace

// One K/V block at shifted positions: queries 0..76 against keys at 5..97, so under the causal
// mask queries 0-4 see no key (O = 0, LSE = -inf), tiles are partial on the diagonal and the
// keys past position 76 are skipped.
TEST_P(gpu_attention, forward_one_block_matches_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const auto [dtype, dim, causal, path] = GetParam();
    const attention_shape s = make_shape(77, 93, dim, causal);
    const pos_t qp = iota_pos(s.q_len), kp = iota_pos(s.k_len, 5);
    const dev_input q = to_device(seeded(attention_q_elems(s), 1, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(s), 2, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(s), 3, 1.0f), dtype);
    const ref_fwd want = reference_fwd(s, q.rounded, k.rounded, v.rounded, qp, kp);

    rt::device_buffer<std::int64_t> d_qp(qp), d_kp(kp);
    rt::device_buffer<float> o(want.o.size()), lse(want.lse.size());
    kc::attention_fwd_init_cuda(s, o.data(), lse.data());
    kc::attention_fwd_cuda(s, dtype, q.data.data(), k.data.data(), v.data.data(),
                           {d_qp.data(), d_kp.data()}, o.data(), lse.data());
    rt::device_synchronize();
    expect_close(o.to_host(), want.o, 2.0f * unit_roundoff(dtype) * max_abs(v.rounded), "O");
    expect_close(lse.to_host(), want.lse, 1e-3f, "LSE");
}

// Many key tiles (555 keys: 9 of the sm80 kernel's 64, 5 of the sm90 kernel's 128, so the
// sm90 two-stage ring wraps and its barrier phases flip) and several query tiles (333 rows),
// keys at 40.. so causal rows 0-39 see nothing and the diagonal crosses tiles partially.
// On sm90 both consumer schedules run: overlapped (default) and serial
// (RINGSCALE_SM90_OVERLAP=0).
TEST_P(gpu_attention, forward_many_tiles_matches_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const auto [dtype, dim, causal, path] = GetParam();
    const attention_shape s = make_shape(333, 555, dim, causal);
    const pos_t qp = iota_pos(s.q_len, 222), kp = iota_pos(s.k_len, 40 + 222);
    const dev_input q = to_device(seeded(attention_q_elems(s), 4, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(s), 5, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(s), 6, 1.0f), dtype);
    const ref_fwd want = reference_fwd(s, q.rounded, k.rounded, v.rounded, qp, kp);

    for (const char* overlap : {"1", "0"}) {
        if (path != ringscale::kernels::attn_path::sm90 && overlap[0] == '0')
            break; // the schedule is the sm90 kernel's
        ::setenv("RINGSCALE_SM90_OVERLAP", overlap, 1);
        rt::device_buffer<float> o(want.o.size()), lse(want.lse.size());
        kc::attention_fwd_init_cuda(s, o.data(), lse.data());
        kc::attention_fwd_cuda(s, dtype, q.data.data(), k.data.data(), v.data.data(),
                               {nullptr, nullptr, qp.front(), kp.front()}, o.data(), lse.data());
        rt::device_synchronize();
        const std::string tag = std::string("overlap=") + overlap + " ";
        expect_close(o.to_host(), want.o, 2.0f * unit_roundoff(dtype) * max_abs(v.rounded),
                     tag + "O");
        expect_close(lse.to_host(), want.lse, 1e-3f, tag + "LSE");
    }
    ::unsetenv("RINGSCALE_SM90_OVERLAP");
}

// Ring forward with zigzag sharding over 2 ranks (S = 148, chunks of 37): each rank's
// queries take its own K/V block, then the other rank's, merged into one (O, LSE).
TEST_P(gpu_attention, forward_two_zigzag_blocks_merge_to_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const auto [dtype, dim, causal, path] = GetParam();
    const std::int64_t seq = 148;
    const int ranks = 2;
    const attention_shape global = make_shape(seq, seq, dim, causal);
    const dev_input q = to_device(seeded(attention_q_elems(global), 11, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(global), 12, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(global), 13, 1.0f), dtype);
    attention_shape s = global;
    s.q_len = s.k_len = seq / ranks;
    for (int rank = 0; rank < ranks; ++rank) {
        const pos_t qp = layout_positions(layout::zigzag, seq, ranks, rank);
        std::vector<float> q_local(attention_q_elems(s));
        scatter_rows(q.rounded.data(), s.batch * s.heads, seq, dim, qp, q_local.data());
        attention_shape ref_shape = s;
        ref_shape.k_len = seq;
        const ref_fwd want =
            reference_fwd(ref_shape, q_local, k.rounded, v.rounded, qp, iota_pos(seq));

        const dev_input q_dev = to_device(q_local, dtype); // exact: already rounded
        rt::device_buffer<std::int64_t> d_qp(qp);
        rt::device_buffer<float> o(want.o.size()), lse(want.lse.size());
        kc::attention_fwd_init_cuda(s, o.data(), lse.data());
        for (int step = 0; step < ranks; ++step) {
            const pos_t kp =
                layout_positions(layout::zigzag, seq, ranks, ring_source_rank(rank, step, ranks));
            std::vector<float> k_blk(attention_kv_elems(s)), v_blk(k_blk.size());
            scatter_rows(k.rounded.data(), s.batch * s.kv_heads, seq, dim, kp, k_blk.data());
            scatter_rows(v.rounded.data(), s.batch * s.kv_heads, seq, dim, kp, v_blk.data());
            const dev_input dk = to_device(k_blk, dtype), dv = to_device(v_blk, dtype);
            rt::device_buffer<std::int64_t> d_kp(kp);
            kc::attention_fwd_cuda(s, dtype, q_dev.data.data(), dk.data.data(), dv.data.data(),
                                   {d_qp.data(), d_kp.data()}, o.data(), lse.data());
        }
        rt::device_synchronize();
        const std::string tag = "r" + std::to_string(rank);
        expect_close(o.to_host(), want.o, 2.0f * unit_roundoff(dtype) * max_abs(v.rounded),
                     tag + " O");
        expect_close(lse.to_host(), want.lse, 1e-3f, tag + " LSE");
    }
}

// Backward of one block against the reference, given the reference's final O and LSE (so
// the forward's error does not enter): delta on the device, then dQ, dK, dV. Queries 0..100
// against keys at 3..92: under the causal mask queries 0-2 get no gradient.
TEST_P(gpu_attention, backward_one_block_matches_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const auto [dtype, dim, causal, path] = GetParam();
    const attention_shape s = make_shape(101, 90, dim, causal);
    const pos_t qp = iota_pos(s.q_len), kp = iota_pos(s.k_len, 3);
    const dev_input q = to_device(seeded(attention_q_elems(s), 21, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(s), 22, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(s), 23, 1.0f), dtype);
    const dev_input d_o = to_device(seeded(attention_q_elems(s), 24, 1.0f), dtype);
    const ref_fwd fwd = reference_fwd(s, q.rounded, k.rounded, v.rounded, qp, kp);
    std::vector<float> dq_ref(q.rounded.size()), dk_ref(k.rounded.size()), dv_ref(dk_ref.size());
    attention_bwd_ref(s, q.rounded.data(), k.rounded.data(), v.rounded.data(), d_o.rounded.data(),
                      qp.data(), kp.data(), dq_ref.data(), dk_ref.data(), dv_ref.data());

    rt::device_buffer<std::int64_t> d_qp(qp), d_kp(kp);
    rt::device_buffer<float> o(fwd.o), lse(fwd.lse), delta(fwd.lse.size());
    rt::device_buffer<float> dq(std::vector<float>(dq_ref.size(), 0.0f)),
        dk(std::vector<float>(dk_ref.size(), 0.0f)), dv(std::vector<float>(dv_ref.size(), 0.0f));
    kc::attention_bwd_delta_cuda(s, dtype, o.data(), d_o.data.data(), delta.data());
    kc::attention_bwd_cuda(s, dtype, q.data.data(), k.data.data(), v.data.data(), d_o.data.data(),
                           lse.data(), delta.data(), {d_qp.data(), d_kp.data()}, dq.data(),
                           dk.data(), dv.data());
    rt::device_synchronize();
    const float u4 = 4.0f * unit_roundoff(dtype);
    expect_close(dq.to_host(), dq_ref, u4 * max_abs(dq_ref), "dQ");
    expect_close(dk.to_host(), dk_ref, u4 * max_abs(dk_ref), "dK");
    expect_close(dv.to_host(), dv_ref, u4 * max_abs(dv_ref), "dV");
}

// Ring backward with zigzag sharding over 2 ranks: all queries (S = 148) against the two K/V
// blocks in turn, with the final LSE of the whole sequence; dQ accumulates over the blocks,
// each block's dK, dV land in its rows of the global gradient.
TEST_P(gpu_attention, backward_two_zigzag_blocks_match_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const auto [dtype, dim, causal, path] = GetParam();
    const std::int64_t seq = 148;
    const int ranks = 2;
    const attention_shape global = make_shape(seq, seq, dim, causal);
    const pos_t all = iota_pos(seq);
    const dev_input q = to_device(seeded(attention_q_elems(global), 31, 2.0f), dtype);
    const dev_input k = to_device(seeded(attention_kv_elems(global), 32, 2.0f), dtype);
    const dev_input v = to_device(seeded(attention_kv_elems(global), 33, 1.0f), dtype);
    const dev_input d_o = to_device(seeded(attention_q_elems(global), 34, 1.0f), dtype);
    const ref_fwd fwd = reference_fwd(global, q.rounded, k.rounded, v.rounded, all, all);
    std::vector<float> dq_ref(q.rounded.size()), dk_ref(k.rounded.size()), dv_ref(dk_ref.size());
    attention_bwd_ref(global, q.rounded.data(), k.rounded.data(), v.rounded.data(),
                      d_o.rounded.data(), all.data(), all.data(), dq_ref.data(), dk_ref.data(),
                      dv_ref.data());

    attention_shape s = global;
    s.k_len = seq / ranks;
    const std::int64_t outer = s.batch * s.kv_heads;
    rt::device_buffer<std::int64_t> d_qp(all);
    rt::device_buffer<float> o(fwd.o), lse(fwd.lse), delta(fwd.lse.size());
    rt::device_buffer<float> dq(std::vector<float>(dq_ref.size(), 0.0f));
    kc::attention_bwd_delta_cuda(global, dtype, o.data(), d_o.data.data(), delta.data());
    std::vector<float> dk_got(dk_ref.size()), dv_got(dv_ref.size());
    for (int r = 0; r < ranks; ++r) {
        const pos_t kp = layout_positions(layout::zigzag, seq, ranks, r);
        std::vector<float> k_blk(attention_kv_elems(s)), v_blk(k_blk.size());
        scatter_rows(k.rounded.data(), outer, seq, dim, kp, k_blk.data());
        scatter_rows(v.rounded.data(), outer, seq, dim, kp, v_blk.data());
        const dev_input dk_in = to_device(k_blk, dtype), dv_in = to_device(v_blk, dtype);
        rt::device_buffer<std::int64_t> d_kp(kp);
        rt::device_buffer<float> dk(std::vector<float>(k_blk.size(), 0.0f)),
            dv(std::vector<float>(k_blk.size(), 0.0f));
        kc::attention_bwd_cuda(s, dtype, q.data.data(), dk_in.data.data(), dv_in.data.data(),
                               d_o.data.data(), lse.data(), delta.data(),
                               {d_qp.data(), d_kp.data()}, dq.data(), dk.data(), dv.data());
        gather_rows(dk.to_host().data(), outer, seq, dim, kp, dk_got.data());
        gather_rows(dv.to_host().data(), outer, seq, dim, kp, dv_got.data());
    }
    const float u4 = 4.0f * unit_roundoff(dtype);
    expect_close(dq.to_host(), dq_ref, u4 * max_abs(dq_ref), "dQ");
    expect_close(dk_got, dk_ref, u4 * max_abs(dk_ref), "dK");
    expect_close(dv_got, dv_ref, u4 * max_abs(dv_ref), "dV");
}

INSTANTIATE_TEST_SUITE_P(kernels, gpu_attention,
                         testing::Combine(testing::Values(attn_dtype::bf16, attn_dtype::fp16),
                                          testing::Values(64, 128), testing::Bool(),
                                          testing::Values(ringscale::kernels::attn_path::sm80,
                                                          ringscale::kernels::attn_path::sm90)),
                         case_name);

// Plain contiguous positions passed as nullptr + first must give bit-identical results to
// the same positions passed as arrays (same tiles, same masks, same arithmetic).
TEST(gpu_attention_positions, contiguous_fast_path_equals_position_arrays) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const attention_shape s = make_shape(200, 150, 128, true);
    const std::int64_t q_first = 100, k_first = 37;
    const dev_input q = to_device(seeded(attention_q_elems(s), 41, 2.0f), attn_dtype::bf16);
    const dev_input k = to_device(seeded(attention_kv_elems(s), 42, 2.0f), attn_dtype::bf16);
    const dev_input v = to_device(seeded(attention_kv_elems(s), 43, 1.0f), attn_dtype::bf16);
    rt::device_buffer<std::int64_t> d_qp(iota_pos(s.q_len, q_first)),
        d_kp(iota_pos(s.k_len, k_first));
    const std::size_t rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
    rt::device_buffer<float> o_arr(q.rounded.size()), lse_arr(rows), o_fast(q.rounded.size()),
        lse_fast(rows);
    kc::attention_fwd_init_cuda(s, o_arr.data(), lse_arr.data());
    kc::attention_fwd_init_cuda(s, o_fast.data(), lse_fast.data());
    kc::attention_fwd_cuda(s, attn_dtype::bf16, q.data.data(), k.data.data(), v.data.data(),
                           {d_qp.data(), d_kp.data()}, o_arr.data(), lse_arr.data());
    kc::attention_fwd_cuda(s, attn_dtype::bf16, q.data.data(), k.data.data(), v.data.data(),
                           {nullptr, nullptr, q_first, k_first}, o_fast.data(), lse_fast.data());
    rt::device_synchronize();
    EXPECT_EQ(o_fast.to_host(), o_arr.to_host());
    EXPECT_EQ(lse_fast.to_host(), lse_arr.to_host());
}

TEST(gpu_attention_delta, matches_cpu_delta) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const attention_shape s = make_shape(75, 1, 128, false);
    const auto o = seeded(attention_q_elems(s), 51, 1.0f);
    const dev_input d_o = to_device(seeded(attention_q_elems(s), 52, 1.0f), attn_dtype::fp16);
    std::vector<float> want(static_cast<std::size_t>(s.batch * s.heads * s.q_len));
    attention_bwd_delta(s, o.data(), d_o.rounded.data(), want.data());
    rt::device_buffer<float> d_o32(o), delta(want.size());
    kc::attention_bwd_delta_cuda(s, attn_dtype::fp16, d_o32.data(), d_o.data.data(), delta.data());
    rt::device_synchronize();
    // 128 fp32 products of O(1) terms summed in fp32 against double: ~1e-6.
    expect_close(delta.to_host(), want, 1e-5f, "delta");
}
