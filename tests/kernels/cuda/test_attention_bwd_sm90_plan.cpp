// The Hopper attention backward's GPU-free arithmetic (kernels/cuda/attention_bwd_sm90_plan.hpp):
// shared-memory map, the walk over query tiles, pipeline stage and mbarrier parities, wgmma
// operand byte offsets, and the shapes the kernel takes. Runs on every build (no CUDA).
#include "kernels/cuda/attention_bwd_sm90_plan.hpp"
#include "tests/support/sm90_smem_emulation.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

using namespace ringscale::kernels;
namespace bwd90 = ringscale::kernels::cuda::bwd90;

namespace {

template <int D>
void expect_layout_fits() {
    using L = bwd90::layout<D>;
    // Every tile region starts on a 1024-byte swizzle atom (TMA 128B swizzle and wgmma
    // descriptors with base offset 0 assume it), in order, without overlap.
    const std::vector<int> starts = {L::k, L::v, L::q, L::d_o, L::ds, L::stats, L::key_pos};
    const std::vector<int> sizes = {L::kv_tile,
                                    L::kv_tile,
                                    bwd90::stages * L::q_tile,
                                    bwd90::stages * L::q_tile,
                                    2 * L::ds_tile,
                                    bwd90::stages * bwd90::stats_bytes,
                                    bwd90::keys * 8};
    for (std::size_t i = 0; i < starts.size(); ++i) {
        EXPECT_EQ(starts[i] % 1024, 0) << "region " << i << ", D=" << D;
        const int end = starts[i] + sizes[i];
        EXPECT_EQ(end, i + 1 < starts.size() ? starts[i + 1] : L::bars) << "region " << i;
    }
    EXPECT_EQ(L::bars % 8, 0);
    EXPECT_LE(L::alloc, bwd90::smem_limit) << "D=" << D;
    // Per stage: 64 floats LSE, 64 floats delta, 64 int64 positions.
    EXPECT_EQ(bwd90::stats_bytes, bwd90::rows * (4 + 4 + 8));
}

} // namespace

TEST(attention_bwd_sm90_plan, shared_memory_map_is_aligned_and_fits) {
    expect_layout_fits<64>();
    expect_layout_fits<128>();
    EXPECT_EQ(bwd90::layout<128>::alloc, 32768 * 5 + 2048 + 1024 + 40 + 1024);
}

TEST(attention_bwd_sm90_plan, registers_fit_the_register_file) {
    EXPECT_EQ(bwd90::threads, 3 * 128);
    EXPECT_LE(bwd90::producer_regs * 128 + bwd90::consumer_regs * 2 * 128, 65536);
    EXPECT_EQ(bwd90::producer_regs % 8, 0);
    EXPECT_EQ(bwd90::consumer_regs % 8, 0);
}

TEST(attention_bwd_sm90_plan, walk_covers_visible_tiles_of_every_group_head) {
    // Not causal: every tile of every head.
    auto w = bwd90::make_walk(200, 0, 4);
    EXPECT_EQ(w.tile0, 0);
    EXPECT_EQ(w.tiles, 4); // 200 rows: 3 full tiles and one of 8 rows
    EXPECT_EQ(w.steps, 16);
    // Causal: the first visible row 130 is in tile 2; tiles 2 and 3 of each of 2 heads.
    w = bwd90::make_walk(200, 130, 2);
    EXPECT_EQ(w.tile0, 2);
    EXPECT_EQ(w.steps, 4);
    // A tile boundary: row 128 starts tile 2.
    EXPECT_EQ(bwd90::make_walk(200, 128, 1).tile0, 2);
    EXPECT_EQ(bwd90::make_walk(200, 127, 1).tile0, 1);
    // No query row sees the block: nothing to do.
    EXPECT_EQ(bwd90::make_walk(200, 200, 3).steps, 0);
    EXPECT_EQ(bwd90::make_walk(200, 1000, 3).steps, 0);
    EXPECT_EQ(bwd90::make_walk(0, 0, 3).steps, 0);
}

TEST(attention_bwd_sm90_plan, producer_waits_for_the_release_one_round_earlier) {
    for (std::int64_t it = 0; it < 12; ++it) {
        EXPECT_EQ(bwd90::stage_of(it), it % bwd90::stages);
        // Consumers wait for full-phase n = it / stages of the stage: parity n % 2.
        EXPECT_EQ(bwd90::full_parity(it), static_cast<std::uint32_t>((it / bwd90::stages) % 2));
        if (it < bwd90::stages) // a fresh barrier counts parity 1 as completed
            EXPECT_EQ(bwd90::empty_parity(it), 1u);
        else // the empty phase the consumers completed at step it - stages
            EXPECT_EQ(bwd90::empty_parity(it), bwd90::full_parity(it - bwd90::stages));
    }
}

TEST(attention_bwd_sm90_plan, k_major_steps_tile_each_row_once) {
    // D = 128: the 8 k-steps of 32 bytes cover the 256 bytes of a row (two 64-column
    // blocks) exactly once; rows are 128 bytes apart inside a block.
    for (const int tile_rows : {64, 128}) {
        std::set<int> bytes;
        for (int kk = 0; kk < 8; ++kk) {
            const int off = bwd90::k_major_offset(kk, 0, tile_rows);
            EXPECT_EQ(off % 32, 0);
            for (int b = 0; b < 32; ++b)
                EXPECT_TRUE(bytes.insert(off + b).second) << "kk " << kk;
        }
        EXPECT_EQ(bytes.size(), 256u);
        EXPECT_EQ(*bytes.rbegin(), tile_rows * 128 + 127); // last byte of row 0, block 1
    }
    // Key half 1 of a 128-key tile starts 64 rows down, a whole number of swizzle atoms.
    EXPECT_EQ(bwd90::k_major_offset(0, 64, 128), 8192);
    EXPECT_EQ(bwd90::k_major_offset(5, 64, 128), 128 * 128 + 8192 + 32);
}

TEST(attention_bwd_sm90_plan, mn_major_steps_start_on_swizzle_atoms) {
    for (int kk = 0; kk < 8; ++kk) {
        EXPECT_EQ(bwd90::mn_major_offset(kk, 0) % 1024, 0);
        EXPECT_EQ(bwd90::mn_major_offset(kk, 64), 8192 + kk * 2048);
    }
}

TEST(attention_bwd_sm90_plan, supported_shapes) {
    attention_shape s;
    s.batch = 2;
    s.heads = 16;
    s.kv_heads = 4;
    s.q_len = 4096;
    s.k_len = 4096;
    for (const int d : {64, 128}) {
        s.head_dim = d;
        EXPECT_TRUE(bwd90::supported(s)) << d;
    }
    for (const int d : {32, 96, 256}) {
        s.head_dim = d;
        EXPECT_FALSE(bwd90::supported(s)) << d;
    }
    s.head_dim = 128;
    s.batch = 65536 / 4 + 1; // batch * kv_heads > 65535 grid rows
    EXPECT_FALSE(bwd90::supported(s));
    s.batch = 1;
    s.q_len = std::int64_t{1} << 31; // beyond TMA's int32 coordinates
    EXPECT_FALSE(bwd90::supported(s));
}

TEST(attention_bwd_sm90_plan, a_mask_beyond_causal_runs_sm80) {
    attention_shape s;
    s.q_len = s.k_len = 4096;
    s.causal = true;
    EXPECT_TRUE(bwd90::supported(s)); // causal alone stays on sm90
    const std::int64_t starts[] = {0, 1000, 4096};
    s.mask.docs = 2;
    s.mask.doc_start = starts;
    EXPECT_FALSE(bwd90::supported(s));
}

// ---- operand layouts on an emulated shared memory (tests/sm90_smem_emulation.hpp) --------
// The kernel's offsets must make the descriptors read exactly the matrices each GEMM needs.
namespace {

using namespace ringscale::test_sm90;

template <int D>
void check_operand_layouts() {
    using L = bwd90::layout<D>;
    const int stage = 1;
    smem_emu sm(L::bytes);
    const tagged k{100, 0}, q{50, 0}; // partial tiles: 100 of 128 keys, 50 of 64 query rows
    for (int c = 0; c < D / 64; ++c) {
        tma_box(sm, L::k + bwd90::col_block_offset(c, bwd90::keys), k, 64 * c, 0, bwd90::keys);
        tma_box(sm, L::q + stage * L::q_tile + bwd90::col_block_offset(c, bwd90::rows), q, 64 * c,
                0, bwd90::rows);
    }
    int bad = 0;
    for (int w = 0; w < 2; ++w)
        for (int kk = 0; kk < D / 16; ++kk) { // S^T = K_w Q^T: A = K rows 64 w.., B = Q
            const int a = L::k + bwd90::k_major_offset(kk, 64 * w, bwd90::keys);
            const int b = L::q + stage * L::q_tile + bwd90::k_major_offset(kk, 0, bwd90::rows);
            for (int m = 0; m < 64; ++m)
                for (int kx = 0; kx < 16; ++kx) {
                    bad += sm.k_major(a, m, kx) != k.at(64 * w + m, 16 * kk + kx);
                    bad += sm.k_major(b, m, kx) != q.at(m, 16 * kk + kx);
                }
        }
    EXPECT_EQ(bad, 0) << "K-major S^T operands, D=" << D;
    bad = 0;
    for (int kk = 0; kk < 4; ++kk) { // dK += dS^T Q: B[k = query][n = d], MN-major
        const int b = L::q + stage * L::q_tile + bwd90::mn_major_offset(kk, 0);
        for (int kx = 0; kx < 16; ++kx)
            for (int n = 0; n < D; ++n)
                bad += sm.mn_major(b, bwd90::col_block_offset(1, bwd90::rows), n, kx) !=
                       q.at(16 * kk + kx, n);
    }
    EXPECT_EQ(bad, 0) << "MN-major dK/dV B operand, D=" << D;
}

/// dS^T as the consumers store it (ds_store_offset, raw stores: the swizzle is in the offset)
/// read back as the MN-major A operand of dQ = dS K, and K as its MN-major B operand.
template <int D>
void check_dq_operands() {
    using L = bwd90::layout<D>;
    smem_emu sm(L::bytes);
    const tagged k{128, 0};
    for (int c = 0; c < D / 64; ++c)
        tma_box(sm, L::k + bwd90::col_block_offset(c, bwd90::keys), k, 64 * c, 0, bwd90::keys);
    const auto tag = [](int key, int query) {
        return static_cast<std::uint16_t>(key * 64 + query + 1);
    };
    for (int w = 0; w < 2; ++w)
        for (int warp = 0; warp < 4; ++warp)
            for (int lane = 0; lane < 32; ++lane)
                for (int j = 0; j < 8; ++j)
                    for (int r = 0; r < 2; ++r) {
                        const int off = L::ds + bwd90::ds_store_offset(w, warp, lane, j, r);
                        const int key = 64 * w + 16 * warp + lane / 4 + 8 * r;
                        const int query = 8 * j + 2 * (lane % 4);
                        sm.half_words[static_cast<std::size_t>(off / 2)] = tag(key, query);
                        sm.half_words[static_cast<std::size_t>(off / 2) + 1] = tag(key, query + 1);
                    }
    int bad = 0;
    for (int w = 0; w < 2; ++w) {
        const int steps = D == 128 ? 8 : 4, key0 = D == 128 ? 0 : 64 * w;
        const int k_block = D == 128 ? bwd90::col_block_offset(w, bwd90::keys) : 0;
        for (int kk = 0; kk < steps; ++kk) {
            const int a = L::ds + bwd90::mn_major_offset(kk, key0);
            const int b = L::k + k_block + bwd90::mn_major_offset(kk, key0);
            for (int kx = 0; kx < 16; ++kx)
                for (int mn = 0; mn < 64; ++mn) {
                    const int key = key0 + 16 * kk + kx;
                    bad += sm.mn_major(a, bwd90::col_block_offset(1, bwd90::keys), mn, kx) !=
                           tag(key, mn);
                    bad += sm.mn_major(b, bwd90::col_block_offset(1, bwd90::keys), mn, kx) !=
                           k.at(key, (D == 128 ? 64 * w : 0) + mn);
                }
        }
    }
    EXPECT_EQ(bad, 0) << "dQ operands, D=" << D;
}

} // namespace

TEST(attention_bwd_sm90_plan, descriptors_read_the_matrices_tma_wrote) {
    check_operand_layouts<64>();
    check_operand_layouts<128>();
}

TEST(attention_bwd_sm90_plan, ds_stores_and_k_feed_the_dq_gemm) {
    check_dq_operands<64>();
    check_dq_operands<128>();
}

TEST(attention_bwd_sm90_plan, ds_stores_are_bank_conflict_free) {
    // One warp's 4-byte stores for one (j, r): 32 distinct banks.
    for (int j = 0; j < 8; ++j)
        for (int r = 0; r < 2; ++r) {
            std::set<int> banks;
            for (int lane = 0; lane < 32; ++lane)
                banks.insert((bwd90::ds_store_offset(1, 2, lane, j, r) / 4) % 32);
            EXPECT_EQ(banks.size(), 32u) << "j " << j << " r " << r;
        }
}
