// The arithmetic of the Hopper attention backward (attention_bwd_sm90.cu) that needs no GPU:
// tile sizes, the shared-memory map, the walk over query tiles, pipeline stage and mbarrier
// parity per step, and byte offsets of wgmma operand slices. Host and device; free of CUDA
// types, so a CPU unit test (tests/kernels/cuda/test_attention_bwd_sm90_plan.cpp) checks it.
#pragma once

#include "kernels/attention_shape.hpp"

#include <cstdint>

#if defined(__CUDACC__)
#define RINGSCALE_HOST_DEVICE __host__ __device__
#else
#define RINGSCALE_HOST_DEVICE
#endif

namespace ringscale::kernels::cuda::bwd90 {

constexpr int keys = 128;              ///< keys per block (two consumer halves of 64)
constexpr int rows = 64;               ///< query rows per pipeline stage
constexpr int stages = 2;              ///< Q / dO pipeline depth
constexpr int threads = 384;           ///< producer warpgroup + two consumer warpgroups
constexpr int producer_regs = 24;      ///< setmaxnreg of the producer warpgroup
constexpr int consumer_regs = 240;     ///< of each consumer: 24 * 128 + 240 * 256 <= 65536
constexpr int full_arrivals = 33;      ///< per "full" phase: the TMA issuer + 32 producer lanes
constexpr int empty_arrivals = 8;      ///< per "empty" phase: one per consumer warp
constexpr int stats_bytes = 1024;      ///< per stage: lse2[64] f32, delta[64] f32, qpos[64] i64
constexpr int smem_limit = 227 * 1024; ///< opt-in dynamic shared memory per block on sm_90

/// Byte offsets into the (1024-byte aligned) dynamic shared memory. Tiles are stored as TMA
/// writes them with the 128-byte swizzle: [D / 64][tile rows][64] (sm90_primitives.cuh).
template <int D>
struct layout {
    static constexpr int kv_tile = keys * D * 2;    ///< K or V
    static constexpr int q_tile = rows * D * 2;     ///< Q or dO, one stage
    static constexpr int ds_tile = keys * rows * 2; ///< dS^T [128 keys][64 queries]
    static constexpr int k = 0;
    static constexpr int v = k + kv_tile;
    static constexpr int q = v + kv_tile;
    static constexpr int d_o = q + stages * q_tile;
    static constexpr int ds = d_o + stages * q_tile; ///< two buffers, alternating per step
    static constexpr int stats = ds + 2 * ds_tile;
    static constexpr int key_pos = stats + stages * stats_bytes; ///< masking positions, int64
    static constexpr int bars = key_pos + keys * 8; ///< kv, full[stages], empty[stages]
    static constexpr int bytes = bars + 8 * (1 + 2 * stages);
    static constexpr int alloc = bytes + 1024; ///< slack to align the base to 1024
};

/// A block's walk: for each query head of the group, query tiles [tile0, tiles); `steps` in
/// all (0 when no query row sees the block's keys).
struct walk {
    std::int64_t tile0 = 0;
    std::int64_t tiles = 0;
    std::int64_t steps = 0;
};

/// The walk of a block whose keys are first visible to query row i_first (0 when not
/// causal; q_len or more when never), over a group of `group` query heads.
RINGSCALE_HOST_DEVICE inline walk make_walk(std::int64_t q_len, std::int64_t i_first,
                                            std::int64_t group) {
    walk w;
    w.tiles = (q_len + rows - 1) / rows;
    w.tile0 = i_first < q_len ? i_first / rows : w.tiles;
    w.steps = group * (w.tiles - w.tile0);
    return w;
}

/// Pipeline stage of step `it`, and the parities its waits use: consumers wait for the
/// stage's "full" phase (it / stages) % 2; the producer waits for the "empty" phase the
/// consumers completed one round earlier, i.e. the opposite parity (on a fresh barrier,
/// parity 1 counts as complete, so the first round does not wait).
RINGSCALE_HOST_DEVICE inline int stage_of(std::int64_t it) {
    return static_cast<int>(it % stages);
}
RINGSCALE_HOST_DEVICE inline std::uint32_t full_parity(std::int64_t it) {
    return static_cast<std::uint32_t>((it / stages) & 1);
}
RINGSCALE_HOST_DEVICE inline std::uint32_t empty_parity(std::int64_t it) {
    return full_parity(it) ^ 1u;
}

/// Byte offset of 64-column block c of a swizzled [D / 64][tile_rows][64] tile: where TMA
/// puts box c, and the MN-major descriptors' LBO (c = 1).
RINGSCALE_HOST_DEVICE inline int col_block_offset(int c, int tile_rows) {
    return c * tile_rows * 128;
}

/// Byte offset of the K-major slice for k-step kk (16 elements of the contraction index D)
/// starting at row `row0` of a swizzled [D / 64][tile_rows][64] tile.
RINGSCALE_HOST_DEVICE inline int k_major_offset(int kk, int row0, int tile_rows) {
    return col_block_offset(kk / 4, tile_rows) + row0 * 128 + (kk % 4) * 32;
}

/// Byte offset of the MN-major slice for k-step kk of a tile whose rows are the contraction
/// index (16 rows of 128 bytes per step, a multiple of the 1024-byte swizzle atom), from row
/// `row0`.
RINGSCALE_HOST_DEVICE inline int mn_major_offset(int kk, int row0) {
    return (row0 + 16 * kk) * 128;
}

/// Byte offset in the dS^T buffer [128 keys][64 queries] (128-byte swizzled) of the pair of
/// query columns 8 j + 2 t, +1 of key row 64 w + 16 warp + g + 8 r, with g = lane / 4, t =
/// lane % 4: where a consumer thread stores its m64n64 accumulator values 4 j + 2 r, +1.
RINGSCALE_HOST_DEVICE inline int ds_store_offset(int w, int warp, int lane, int j, int r) {
    const int g = lane / 4, t = lane % 4;
    const int row = 64 * w + 16 * warp + g + 8 * r; // row % 8 == g: the swizzle phase
    return row * 128 + ((j ^ g) << 4) + 4 * t;
}

/// Whether attention_bwd_sm90 takes this shape: head_dim 64 or 128, grid rows
/// (batch * kv_heads) <= 65535, lengths and head counts TMA's int32 coordinates reach, and
/// no mask beyond causal (the sm90 kernels take none: a masked call runs the sm80 kernel).
inline bool supported(const attention_shape& s) {
    constexpr std::int64_t int32_max = 2147483647;
    return (s.head_dim == 64 || s.head_dim == 128) && s.batch * s.kv_heads <= 65535 &&
           s.batch * s.heads <= int32_max && s.q_len <= int32_max && s.k_len <= int32_max &&
           !mask_active(s.mask);
}

} // namespace ringscale::kernels::cuda::bwd90
