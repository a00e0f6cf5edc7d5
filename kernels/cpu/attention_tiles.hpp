// The tiles of the CPU attention kernels: a worker's slice of the workspace, the tile size
// of a call (a block-sparse mask's block), and the mask (kernels/mask.hpp) per tile: which
// tiles to skip and which keys of a partial tile's row a query sees. Internal to
// kernels/cpu/attention_cpu.cpp.
#pragma once

#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/attention_gemm.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask.hpp"
#include "kernels/threads.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace ringscale::kernels::cpu {

/// The keys [a, b) of a tile's score row that a query may see.
struct key_span {
    std::int64_t a = 0, b = 0;
    bool pair_masked = false; ///< some scores inside [a, b) were set to -inf
};

/// Keys of a tile (positions kp, cols of them) visible to query position `qp`: all of them
/// unless the tile is partial; then the interval rules (causal, window, documents) bound
/// [a, b) and the pair rules (block-sparse, dilation) set the scores they drop to -inf.
inline key_span row_keys(const attention_shape& s, bool partial, std::int64_t qp,
                         const std::int64_t* kp, std::int64_t cols, float* scores) {
    if (!partial)
        return {0, cols, false};
    if (!mask_active(s.mask))
        return {0, std::upper_bound(kp, kp + cols, qp) - kp, false};
    const key_range r = mask_row_range(s.mask, s.causal, qp);
    key_span out;
    if (r.lo > r.hi)
        return out;
    out.a = std::lower_bound(kp, kp + cols, r.lo) - kp;
    out.b = std::upper_bound(kp + out.a, kp + cols, r.hi) - kp;
    if (!mask_has_pair_rules(s.mask))
        return out;
    for (std::int64_t j = out.a; j < out.b; ++j)
        if (!mask_pair_kept(s.mask, qp, kp[j])) {
            scores[j] = -std::numeric_limits<float>::infinity();
            out.pair_masked = true;
        }
    return out;
}

/// A tile's visibility: the causal test alone, or the mask's classification.
inline block_mask tile_class(const attention_shape& s, const std::int64_t* qp, std::int64_t rows,
                             const std::int64_t* kp, std::int64_t cols) {
    if (!mask_active(s.mask))
        return classify_block(qp, rows, kp, cols, s.causal);
    return mask_classify_rows(s.mask, s.causal, qp, rows, kp, cols);
}

/// The tiles of a call: the workspace's, or a block-sparse mask's block when it fits in them
/// (16 rows at least), so a tile is one block pair and whole tiles are skipped.
inline attention_tiles call_tiles(const attention_workspace& ws, const attention_shape& s) {
    attention_tiles t = ws.m_tiles;
    const std::int64_t b = s.mask.block;
    if (b >= 16 && b <= t.q_tile && b <= t.k_tile)
        t.q_tile = t.k_tile = b;
    return t;
}

/// One worker's slice of the workspace.
struct scratch {
    std::int64_t q_tile;
    std::int64_t k_tile;
    float* scores;
    float* dp;
    float* row_max;
    float* row_sum;
    float* kt; ///< a key tile's Kᵀ, then Vᵀ, by pack_transposed (AVX-512 tile products only)
    float* vt;
    elem round = elem::f32; ///< the type P and dS are rounded to before their products
};

inline scratch scratch_of(attention_workspace& ws, int worker, attention_tiles t) {
    const std::int64_t tile = ws.m_tiles.q_tile * ws.m_tiles.k_tile;
    float* rows = ws.m_rows.data() + 2 * ws.m_tiles.q_tile * worker;
    const std::int64_t pack = packed_size(ws.m_tiles.k_tile, 128);
    float* kt = ws.m_pack.empty() ? nullptr : ws.m_pack.data() + 2 * pack * worker;
    return {t.q_tile,
            t.k_tile,
            ws.m_scores.data() + tile * worker,
            ws.m_dp.data() + tile * worker,
            rows,
            rows + ws.m_tiles.q_tile,
            kt,
            kt ? kt + pack : nullptr};
}

/// Offsets of head (b, h): query-side rows and kv-side rows, in elements.
struct head_offsets {
    std::int64_t q;
    std::int64_t kv;
    std::int64_t row;
};

inline head_offsets offsets_of(const attention_shape& s, std::int64_t b, std::int64_t h) {
    const std::int64_t group = s.heads / s.kv_heads;
    const std::int64_t row = (b * s.heads + h) * s.q_len;
    return {row * s.head_dim, (b * s.kv_heads + h / group) * s.k_len * s.head_dim, row};
}

/// Run fn(worker, item) for every item in [0, items) on up to `threads` threads, taking
/// items dynamically. With more than one thread OpenBLAS is set to one thread meanwhile
/// (each worker's small GEMMs run in that worker) and restored afterwards.
template <class Fn>
void parallel_items(int threads, std::int64_t items, const Fn& fn) {
    threads = static_cast<int>(std::min<std::int64_t>(threads, items));
    if (threads <= 1) {
        for (std::int64_t i = 0; i < items; ++i)
            fn(0, i);
        return;
    }
    const serial_blas one_thread; // the launcher's count back when this returns or throws
    std::atomic<std::int64_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&](int worker) {
        try {
            for (std::int64_t i = next++; i < items; i = next++)
                fn(worker, i);
        } catch (...) {
            const std::lock_guard<std::mutex> lock(failure_mutex);
            failure = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    for (int w = 1; w < threads; ++w)
        pool.emplace_back(work, w);
    work(0);
    for (std::thread& t : pool)
        t.join();
    if (failure)
        std::rethrow_exception(failure);
}

} // namespace ringscale::kernels::cpu
