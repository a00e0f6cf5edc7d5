// The arithmetic of the Hopper attention forward (attention_fwd_sm90.cu) that needs no GPU:
// tile sizes, the shared-memory map, the TMA box placement and the byte offsets of the wgmma
// operand slices, and the shapes the kernel takes. Host and device; free of CUDA types, so a
// CPU unit test (tests/kernels/cuda/test_attention_fwd_sm90_plan.cpp) checks it against the PTX
// ISA's canonical layouts, as tests/kernels/cuda/test_attention_bwd_sm90_plan.cpp does for the
// backward.
#pragma once

#include "kernels/attention_shape.hpp"

#include <cstdint>

#if defined(__CUDACC__)
#define RINGSCALE_FWD90_HD __host__ __device__
#else
#define RINGSCALE_FWD90_HD
#endif

namespace ringscale::kernels::cuda::fwd90 {

constexpr int rows = 128;   ///< query rows per block (two consumer warpgroups of 64)
constexpr int wg_rows = 64; ///< query rows of one consumer warpgroup
constexpr int keys = 128;   ///< keys per K / V tile
constexpr int stages = 2;   ///< K / V pipeline depth

/// Byte offsets into the (1024-byte aligned) dynamic shared memory. Each tile is stored as
/// TMA writes it with the 128-byte swizzle: its 64-column blocks one after the other
/// ([D / 64][tile rows][64], sm90_primitives.cuh). Q, then K0 V0 K1 V1, then the barriers.
template <int D>
struct layout {
    static constexpr int col_blocks = D / 64;
    static constexpr int q_bytes = rows * D * 2;
    static constexpr int kv_bytes = keys * D * 2; ///< one K or one V tile
    static constexpr int tiles_bytes = q_bytes + 2 * stages * kv_bytes;
    static constexpr int smem_bytes = tiles_bytes + 1024 + 128; ///< + alignment + barriers
    static constexpr int q = 0;
    RINGSCALE_FWD90_HD static constexpr int k(int s) { return q_bytes + 2 * s * kv_bytes; }
    RINGSCALE_FWD90_HD static constexpr int v(int s) { return q_bytes + (2 * s + 1) * kv_bytes; }
};

/// Byte offset of 64-column block c of a swizzled [D / 64][tile_rows][64] tile: where TMA
/// puts box c (64 columns from column 64 c), and the MN-major descriptors' LBO (c = 1).
RINGSCALE_FWD90_HD constexpr int col_block_offset(int c, int tile_rows) {
    return c * tile_rows * 128;
}

/// S = Q K^T, A operand (Q, K-major): the slice of k-step kk (16 elements of D) for the 64
/// rows of consumer warpgroup wg, relative to the Q tile.
RINGSCALE_FWD90_HD constexpr int scores_a_offset(int kk, int wg) {
    return col_block_offset(kk / 4, rows) + wg * wg_rows * 128 + (kk % 4) * 32;
}

/// S = Q K^T, B operand (K, K-major: the N = 128 keys are rows): k-step kk, relative to the
/// K tile.
RINGSCALE_FWD90_HD constexpr int scores_b_offset(int kk) {
    return col_block_offset(kk / 4, keys) + (kk % 4) * 32;
}

/// O += P V, B operand (V, MN-major: d contiguous): k-step kk (16 keys, 16 rows of 128
/// bytes), relative to the V tile; the descriptor's LBO is pv_lbo(), SBO 1024.
RINGSCALE_FWD90_HD constexpr int pv_b_offset(int kk) {
    return kk * 16 * 128;
}
RINGSCALE_FWD90_HD constexpr int pv_lbo() {
    return col_block_offset(1, keys);
}

/// Whether attention_fwd_sm90 takes this shape: head_dim 64 or 128, grid rows (batch *
/// heads) <= 65535, and lengths TMA's int32 coordinates reach (the kernel passes query row,
/// key row and batch * head indices as int), and no mask beyond causal (the sm90 kernels take
/// none: a masked call runs the sm80 kernel).
inline bool supported(const attention_shape& s) {
    constexpr std::int64_t int32_max = 2147483647;
    return (s.head_dim == 64 || s.head_dim == 128) && s.batch * s.heads <= 65535 &&
           s.q_len <= int32_max && s.k_len <= int32_max && !mask_active(s.mask);
}

} // namespace ringscale::kernels::cuda::fwd90
