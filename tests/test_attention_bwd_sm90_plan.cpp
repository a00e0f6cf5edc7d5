// The Hopper attention backward's GPU-free arithmetic (kernels/cuda/attention_bwd_sm90_plan.hpp):
// shared-memory map, the walk over query tiles, pipeline stage and mbarrier parities, wgmma
// operand byte offsets, and the shapes the kernel takes. Runs on every build (no CUDA).
#include "kernels/cuda/attention_bwd_sm90_plan.hpp"

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
    const std::vector<int> starts = {L::k, L::v, L::q, L::d_o, L::ds, L::stats};
    const std::vector<int> sizes = {L::kv_tile,
                                    L::kv_tile,
                                    bwd90::stages * L::q_tile,
                                    bwd90::stages * L::q_tile,
                                    2 * L::ds_tile,
                                    bwd90::stages * bwd90::stats_bytes};
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
    EXPECT_EQ(bwd90::layout<128>::alloc, 32768 * 5 + 2048 + 40 + 1024);
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
