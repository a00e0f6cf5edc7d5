// The Hopper attention forward's GPU-free arithmetic (kernels/cuda/attention_fwd_sm90_plan.hpp):
// the shapes the kernel takes, the shared-memory map, and the wgmma operand byte offsets
// checked on an emulated shared memory against the PTX ISA's canonical layouts. Runs on every
// build (no CUDA).
#include "kernels/cuda/attention_fwd_sm90_plan.hpp"
#include "tests/support/sm90_smem_emulation.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace ringscale::kernels;
namespace fwd90 = ringscale::kernels::cuda::fwd90;

TEST(attention_fwd_sm90_plan, supported_shapes) {
    attention_shape s;
    s.batch = 2;
    s.heads = 16;
    s.kv_heads = 4;
    s.q_len = 4096;
    s.k_len = 4096;
    for (const int d : {64, 128}) {
        s.head_dim = d;
        EXPECT_TRUE(fwd90::supported(s)) << d;
    }
    for (const int d : {32, 96, 256}) {
        s.head_dim = d;
        EXPECT_FALSE(fwd90::supported(s)) << d;
    }
    s.head_dim = 64;
    s.batch = 65536 / 16; // batch * heads = 65536 grid rows: one too many
    EXPECT_FALSE(fwd90::supported(s));
    s.batch = 65535 / 16;
    EXPECT_TRUE(fwd90::supported(s));
    s.batch = 1;
    s.q_len = std::int64_t{1} << 31; // beyond TMA's int32 coordinates
    EXPECT_FALSE(fwd90::supported(s));
    s.q_len = 4096;
    s.k_len = std::int64_t{1} << 31;
    EXPECT_FALSE(fwd90::supported(s));
}

TEST(attention_fwd_sm90_plan, a_mask_beyond_causal_runs_sm80) {
    attention_shape s;
    s.q_len = s.k_len = 4096;
    s.causal = true;
    EXPECT_TRUE(fwd90::supported(s)); // causal alone stays on sm90
    s.mask.window = 512;
    EXPECT_FALSE(fwd90::supported(s));
    s.mask = mask_view{};
    s.mask.dilations = 1;
    s.mask.segment[0] = s.mask.rate[0] = 1;
    EXPECT_FALSE(fwd90::supported(s));
}

TEST(attention_fwd_sm90_plan, shared_memory_map_is_aligned_and_fits) {
    // Every tile and 64-column block starts on a 1024-byte swizzle atom (TMA 128B swizzle and
    // wgmma descriptors with base offset 0 assume it), in order, without overlap; the
    // mbarriers follow; the whole fits the 227 KiB a block may opt into on sm_90.
    const auto check = [](auto l, int d) {
        using L = decltype(l);
        std::vector<int> starts = {L::q};
        for (int s = 0; s < fwd90::stages; ++s) {
            starts.push_back(L::k(s));
            starts.push_back(L::v(s));
        }
        std::vector<int> sizes = {L::q_bytes};
        for (int s = 0; s < 2 * fwd90::stages; ++s)
            sizes.push_back(L::kv_bytes);
        for (std::size_t i = 0; i < starts.size(); ++i) {
            EXPECT_EQ(starts[i] % 1024, 0) << "region " << i << ", D=" << d;
            EXPECT_EQ(starts[i] + sizes[i], i + 1 < starts.size() ? starts[i + 1] : L::tiles_bytes)
                << "region " << i << ", D=" << d;
        }
        EXPECT_EQ(fwd90::col_block_offset(1, fwd90::rows) % 1024, 0);
        EXPECT_EQ(fwd90::col_block_offset(1, fwd90::keys) % 1024, 0);
        EXPECT_LE(L::smem_bytes, 227 * 1024) << "D=" << d;
        // The expect_tx byte counts are the boxes' bytes: D / 64 boxes of 64 columns each
        // (TMA counts a box's zero-filled part too).
        EXPECT_EQ(L::q_bytes, L::col_blocks * fwd90::rows * 64 * 2);
        EXPECT_EQ(L::kv_bytes, L::col_blocks * fwd90::keys * 64 * 2);
    };
    check(fwd90::layout<64>{}, 64);
    check(fwd90::layout<128>{}, 128);
}

// ---- operand layouts on an emulated shared memory (tests/sm90_smem_emulation.hpp) --------
// TMA box writes at the forward's offsets, read back at its descriptor offsets, must give the
// matrices each GEMM needs.
namespace {

using namespace ringscale::test_sm90;

template <int D>
void check_forward_operands(int stage, int q_len, int k_len, int i0, int tile) {
    using L = fwd90::layout<D>;
    smem_emu sm(L::tiles_bytes);
    const tagged q{q_len, 0}, k{k_len, 7}, v{k_len, 13};
    const int j0 = tile * fwd90::keys;
    for (int c = 0; c < L::col_blocks; ++c) { // as fwd_produce issues the boxes
        tma_box(sm, L::q + fwd90::col_block_offset(c, fwd90::rows), q, 64 * c, i0, fwd90::rows);
        tma_box(sm, L::k(stage) + fwd90::col_block_offset(c, fwd90::keys), k, 64 * c, j0,
                fwd90::keys);
        tma_box(sm, L::v(stage) + fwd90::col_block_offset(c, fwd90::keys), v, 64 * c, j0,
                fwd90::keys);
    }
    int bad_a = 0, bad_b = 0, bad_v = 0;
    for (int kk = 0; kk < D / 16; ++kk) { // S = Q K^T: A[m][k] = Q row, B[n][k] = K row
        for (int wg = 0; wg < 2; ++wg) {
            const int a = L::q + fwd90::scores_a_offset(kk, wg);
            for (int m = 0; m < fwd90::wg_rows; ++m)
                for (int kx = 0; kx < 16; ++kx)
                    bad_a +=
                        sm.k_major(a, m, kx) != q.at(i0 + fwd90::wg_rows * wg + m, 16 * kk + kx);
        }
        const int b = L::k(stage) + fwd90::scores_b_offset(kk);
        for (int n = 0; n < fwd90::keys; ++n)
            for (int kx = 0; kx < 16; ++kx)
                bad_b += sm.k_major(b, n, kx) != k.at(j0 + n, 16 * kk + kx);
    }
    for (int kk = 0; kk < fwd90::keys / 16; ++kk) { // O += P V: B[k = key][n = d], MN-major
        const int b = L::v(stage) + fwd90::pv_b_offset(kk);
        for (int kx = 0; kx < 16; ++kx)
            for (int n = 0; n < D; ++n)
                bad_v += sm.mn_major(b, fwd90::pv_lbo(), n, kx) != v.at(j0 + 16 * kk + kx, n);
    }
    EXPECT_EQ(bad_a, 0) << "Q (K-major A of S = Q K^T), D=" << D << " stage " << stage;
    EXPECT_EQ(bad_b, 0) << "K (K-major B of S = Q K^T), D=" << D << " stage " << stage;
    EXPECT_EQ(bad_v, 0) << "V (MN-major B of O += P V), D=" << D << " stage " << stage;
}

} // namespace

TEST(attention_fwd_sm90_plan, descriptors_read_the_matrices_tma_wrote) {
    for (int stage = 0; stage < fwd90::stages; ++stage) {
        // Full tiles, then the last, partial ones (rows / keys past the end read 0).
        check_forward_operands<64>(stage, 512, 512, 128, 1);
        check_forward_operands<128>(stage, 512, 512, 256, 2);
        check_forward_operands<64>(stage, 200, 300, 128, 2);
        check_forward_operands<128>(stage, 150, 70, 128, 0);
    }
}

TEST(attention_fwd_sm90_plan, descriptor_fields_fit_their_14_bit_encodings) {
    // Start addresses, LBO and SBO are encoded >> 4 in 14 bits (PTX ISA matrix descriptor):
    // every offset below 256 KiB and a multiple of 16. The descriptors' base offset (bits
    // 49-51) is 0: the PTX ISA requires (pattern start >> 7) & 7 there, and every slice lies
    // in a swizzle pattern that starts on a 1024-byte boundary (the K-major 32-byte steps stay
    // inside the first 128-byte row of their pattern).
    const auto base_offset = [](int off) { return (off >> 7) & 7; };
    for (int kk = 0; kk < 8; ++kk) {
        for (int wg = 0; wg < 2; ++wg) {
            EXPECT_EQ(fwd90::scores_a_offset(kk, wg) % 16, 0);
            EXPECT_EQ(base_offset(fwd90::scores_a_offset(kk, wg)), 0) << kk << " " << wg;
        }
        EXPECT_EQ(fwd90::scores_b_offset(kk) % 16, 0);
        EXPECT_EQ(base_offset(fwd90::scores_b_offset(kk)), 0) << kk;
        EXPECT_EQ(fwd90::pv_b_offset(kk) % 1024, 0); // whole swizzle atoms along the keys
    }
    EXPECT_EQ(fwd90::pv_lbo() % 16, 0);
    EXPECT_LT(fwd90::pv_lbo() >> 4, 1 << 14);
    EXPECT_LT(fwd90::layout<128>::smem_bytes, 1 << 18);
}
