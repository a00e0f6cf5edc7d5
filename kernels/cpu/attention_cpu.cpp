#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/attention_exp.hpp"
#include "kernels/cpu/attention_gemm.hpp"
#include "kernels/cpu/attention_row_ops.hpp"
#include "kernels/cpu/attention_tiles.hpp"

#include "kernels/layout.hpp"
#include "kernels/threads.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace ringscale::kernels::cpu {

namespace {

constexpr float k_log2e = 1.44269504088896341f;
constexpr float k_ln2 = 0.693147180559945309f;
constexpr float k_neg_inf = -std::numeric_limits<float>::infinity();
// Query rows per block in a tile the causal diagonal crosses, each block against the keys its
// last row sees: smaller blocks skip more of the masked half, larger ones run longer products.
// At S=256 (one tile a head, D=64, one core) 32 took the forward and backward 3% under 64.
constexpr std::int64_t k_diag_rows = 32;

/// One (b, h) pair's tensors, already offset to the head.
struct head_view {
    const float* q;
    const float* k;
    const float* v;
    const float* d_o;
    const float* lse_in;
    const float* delta;
    float* o;
    float* lse;
    float* dq;
    float* dk;
    float* dv;
    const float* kt = nullptr; ///< forward, AVX-512: Kᵀ (pack_transposed), V (pack_panels)
    std::int64_t kt_tile = 0;  ///< floats of each; key tile t's Kᵀ at kt + 2 t kt_tile, V after
};

/// Online-softmax step on a [rows, cols] score tile (log2 units): update the running max
/// and sum, turn the tile into P (0 where masked), rescale the output rows. `lanes`: null, or
/// each row's maximum by lane (tile_gemm_nt), which stands for the row's on a whole tile.
void fwd_tile_softmax(const attention_shape& shape, float* s, std::int64_t rows, std::int64_t cols,
                      bool partial, const std::int64_t* qp, const std::int64_t* kp,
                      std::int64_t dim, float* o, const scratch& ws, const float* lanes) {
    if (lanes && !partial && ws.round == elem::f32) // lanes: the AVX-512 tile products ran
        return softmax_whole_rows_avx512(s, rows, cols, lanes, ws.row_max, ws.row_sum, o, dim);
    for (std::int64_t r = 0; r < rows; ++r) {
        float* sr = s + r * cols;
        const key_span keys = row_keys(shape, partial, qp[r], kp, cols, sr);
        const std::int64_t cnt = keys.b - keys.a;
        const float tile_max = cnt <= 0            ? k_neg_inf
                               : lanes && !partial ? row_max(lanes + 16 * r, 16)
                                                   : row_max(sr + keys.a, cnt);
        if (tile_max == k_neg_inf) { // no visible key in this tile
            row_zero(sr, cols);
            continue;
        }
        const float m_old = ws.row_max[r];
        const float m_new = std::max(m_old, tile_max);
        const float sum = row_exp2_sum(sr + keys.a, cnt, m_new);
        if (keys.pair_masked)
            row_zero_clamped(sr + keys.a, cnt);
        row_round(sr + keys.a, cnt, ws.round); // P in the dtype before P·V; the sum is not
        row_zero(sr, keys.a);
        row_zero(sr + keys.b, cols - keys.b);
        const float a = std::exp2(m_old - m_new); // 0 when nothing was seen yet
        ws.row_sum[r] = ws.row_sum[r] * a + sum;
        ws.row_max[r] = m_new;
        if (a == 0.0f)
            row_zero(o + r * dim, dim);
        else if (a != 1.0f)
            row_scale(o + r * dim, dim, a);
    }
}

/// Forward for query rows [i0, i0 + rows) of one head against all keys of the block.
void fwd_q_tile(const attention_shape& s, const head_view& h, std::int64_t i0, std::int64_t rows,
                const std::int64_t* q_pos, const std::int64_t* k_pos, const scratch& ws) {
    const std::int64_t D = s.head_dim;
    const std::int64_t* qp = q_pos + i0;
    float* o = h.o + i0 * D;
    float* lse = h.lse + i0;
    // Resume from the accumulator: running max = LSE, running sum = 1 (O is normalised).
    for (std::int64_t r = 0; r < rows; ++r) {
        const bool seen = lse[r] != k_neg_inf;
        ws.row_max[r] = seen ? lse[r] * k_log2e : k_neg_inf;
        ws.row_sum[r] = seen ? 1.0f : 0.0f;
    }
    const std::int64_t k_end =
        s.causal ? std::upper_bound(k_pos, k_pos + s.k_len, qp[rows - 1]) - k_pos : s.k_len;
    const float alpha = attention_scale(s) * k_log2e;
    for (std::int64_t j0 = 0; j0 < k_end; j0 += ws.k_tile) {
        const std::int64_t cols = std::min(ws.k_tile, k_end - j0);
        const block_mask mask = tile_class(s, qp, rows, k_pos + j0, cols);
        if (mask == block_mask::masked)
            continue;
        // A tile the causal diagonal crosses (no other mask) in blocks of k_diag_rows query rows,
        // each against the keys its last row sees: the products skip most of the masked half.
        const bool diagonal = mask == block_mask::partial && !mask_active(s.mask);
        const std::int64_t step = diagonal ? k_diag_rows : rows;
        const std::int64_t* kp = k_pos + j0;
        auto seen = [&](std::int64_t r0) { // keys of the tile the block's last row sees
            const std::int64_t last = qp[std::min(rows, r0 + step) - 1];
            return diagonal ? std::upper_bound(kp, kp + cols, last) - kp : cols;
        };
        // The next key tile's packed Kᵀ and V, on their way to L2 while this one's products run.
        const float* next_kt =
            h.kt && j0 + ws.k_tile < k_end ? h.kt + (j0 / ws.k_tile + 1) * 2 * h.kt_tile : nullptr;
        float* lanes = ws.dp; // the rows' maxima by lane, where the tile products leave them
        std::fill(lanes, lanes + 16 * rows, k_neg_inf);
        bool fused = false;
        for (std::int64_t r0 = 0; r0 < rows; r0 += step)
            if (const std::int64_t n = seen(r0); n > 0)
                fused = tile_gemm_nt(std::min(step, rows - r0), n, D, alpha, h.q + (i0 + r0) * D,
                                     h.k + j0 * D, h.kt + j0 / ws.k_tile * 2 * h.kt_tile,
                                     ws.scores + r0 * cols, cols, lanes + 16 * r0,
                                     r0 == 0 ? next_kt : nullptr, h.kt_tile);
        fwd_tile_softmax(s, ws.scores, rows, cols, mask == block_mask::partial, qp, kp, D, o, ws,
                         fused ? lanes : nullptr);
        for (std::int64_t r0 = 0; r0 < rows; r0 += step)
            if (const std::int64_t n = seen(r0); n > 0)
                tile_gemm_nn_acc(std::min(step, rows - r0), D, n, ws.scores + r0 * cols, cols,
                                 h.v + j0 * D, D, o + r0 * D, D,
                                 h.kt ? h.kt + (j0 / ws.k_tile * 2 + 1) * h.kt_tile : nullptr,
                                 std::min(ws.k_tile, s.k_len - j0), // the tile's rows packed
                                 r0 == 0 && next_kt ? next_kt + h.kt_tile : nullptr, h.kt_tile);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
        const float l = ws.row_sum[r];
        if (l == 0.0f) { // no visible key in any block so far
            row_zero(o + r * D, D);
            lse[r] = k_neg_inf;
            continue;
        }
        row_scale(o + r * D, D, 1.0f / l);
        lse[r] = (ws.row_max[r] + std::log2(l)) * k_ln2;
    }
}

/// P and dS of query rows [i0, i0 + rows) against the first n of the key tile's rows
/// [j0, j0 + cols) (n covers every key the rows see), in the dtype, into ws.scores and ws.dp
/// at row stride cols from `row` on. `pf`, `pf_at`: floats of the query rows the head's loop
/// takes next, and where they start (their Q and dO are fetched toward L2 meanwhile).
void bwd_scores(const attention_shape& s, const head_view& h, std::int64_t i0, std::int64_t rows,
                std::int64_t j0, std::int64_t cols, std::int64_t n, bool partial,
                const std::int64_t* qp, const std::int64_t* kp, const scratch& ws, std::int64_t row,
                std::int64_t pf, std::int64_t pf_at) {
    const std::int64_t D = s.head_dim;
    const float scale = attention_scale(s);
    float* p = ws.scores + row * cols;
    float* dp = ws.dp + row * cols;
    tile_gemm_nt(rows, n, D, scale * k_log2e, h.q + i0 * D, h.k + j0 * D, ws.kt, p, cols, nullptr,
                 pf ? h.q + pf_at : nullptr, pf);
    for (std::int64_t r = 0; r < rows; ++r) {
        float* pr = p + r * cols;
        const float lse = h.lse_in[i0 + r];
        const key_span keys =
            lse == k_neg_inf ? key_span{} : row_keys(s, partial, qp[r], kp, n, pr);
        row_exp2_sum(pr + keys.a, keys.b - keys.a, lse * k_log2e); // P from the final LSE
        if (keys.pair_masked)
            row_zero_clamped(pr + keys.a, keys.b - keys.a);
        row_zero(pr, keys.a);
        row_zero(pr + keys.b, n - keys.b);
    }
    // dP = dO_i V_j^T, then dS = P (dP - delta) scale from the unrounded P (as on CUDA).
    tile_gemm_nt(rows, n, D, 1.0f, h.d_o + i0 * D, h.v + j0 * D, ws.vt, dp, cols, nullptr,
                 pf ? h.d_o + pf_at : nullptr, pf);
    for (std::int64_t r = 0; r < rows; ++r)
        row_ds(p + r * cols, dp + r * cols, n, h.delta[i0 + r], scale);
    // dV_j += P^T dO_i with P in the dtype; dQ_i += dS K_j and dK_j += dS^T Q_i with dS in it.
    for (std::int64_t r = 0; r < rows; ++r) {
        row_round(p + r * cols, n, ws.round);
        row_round(dp + r * cols, n, ws.round);
    }
}

/// Backward for query rows [i0, i0 + rows) against the first n of the key tile's rows
/// [j0, j0 + cols): P and dS (bwd_scores), then dV, dQ and dK from them. `next`: the first of
/// the query rows the head's loop takes next (their Q, dO and dQ are fetched toward L2
/// meanwhile), or -1.
void bwd_block(const attention_shape& s, const head_view& h, std::int64_t i0, std::int64_t rows,
               std::int64_t j0, std::int64_t cols, std::int64_t n, bool partial,
               const std::int64_t* qp, const std::int64_t* kp, const scratch& ws,
               std::int64_t next) {
    const std::int64_t D = s.head_dim;
    const std::int64_t pf = next < 0 ? 0 : std::min(ws.q_tile, s.q_len - next) * D;
    const std::int64_t pf_at = next < 0 ? 0 : next * D;
    bwd_scores(s, h, i0, rows, j0, cols, n, partial, qp, kp, ws, 0, pf, pf_at);
    const float* p = ws.scores;
    const float* dp = ws.dp;
    tile_gemm_tn_acc(n, D, rows, p, cols, h.d_o + i0 * D, D, h.dv + j0 * D, D);
    tile_gemm_nn_acc(rows, D, n, dp, cols, h.k + j0 * D, D, h.dq + i0 * D, D, nullptr, 0,
                     pf ? h.dq + pf_at : nullptr, pf);
    tile_gemm_tn_acc(n, D, rows, dp, cols, h.q + i0 * D, D, h.dk + j0 * D, D);
}

/// Backward of a tile the causal diagonal crosses (no other mask), in two passes so that no
/// product runs over a short k. First P and dS by blocks of k_diag_rows query rows, each
/// against the keys its last row sees (the products skip most of the masked half; past them,
/// to the next 64 keys, zeros). Then dV and dK by blocks of 64 keys, each over every query row
/// that sees the block (k up to the tile's rows, where blocks of query rows gave k_diag_rows),
/// and dQ by the first pass's blocks.
void bwd_diagonal(const attention_shape& s, const head_view& h, std::int64_t i0, std::int64_t rows,
                  std::int64_t j0, std::int64_t cols, const std::int64_t* qp,
                  const std::int64_t* kp, const scratch& ws, std::int64_t next) {
    const std::int64_t D = s.head_dim;
    const std::int64_t pf = next < 0 ? 0 : std::min(ws.q_tile, s.q_len - next) * D;
    const std::int64_t pf_at = next < 0 ? 0 : next * D;
    auto seen = [&](std::int64_t r0, std::int64_t m) { // keys of the tile the block's last row sees
        return std::upper_bound(kp, kp + cols, qp[r0 + m - 1]) - kp;
    };
    for (std::int64_t r0 = 0; r0 < rows; r0 += k_diag_rows) {
        const std::int64_t m = std::min(k_diag_rows, rows - r0);
        const std::int64_t n = seen(r0, m);
        if (n > 0)
            bwd_scores(s, h, i0 + r0, m, j0, cols, n, true, qp + r0, kp, ws, r0, r0 == 0 ? pf : 0,
                       pf_at);
        const std::int64_t end = std::min(cols, (n + 63) / 64 * 64);
        for (std::int64_t r = r0; r < r0 + m; ++r) {
            row_zero(ws.scores + r * cols + n, end - n);
            row_zero(ws.dp + r * cols + n, end - n);
        }
    }
    for (std::int64_t c0 = 0; c0 < cols; c0 += 64) {
        const std::int64_t c = std::min<std::int64_t>(64, cols - c0);
        const std::int64_t r = std::lower_bound(qp, qp + rows, kp[c0]) - qp; // first to see c0
        if (r == rows)
            break;
        tile_gemm_tn_acc(c, D, rows - r, ws.scores + r * cols + c0, cols, h.d_o + (i0 + r) * D, D,
                         h.dv + (j0 + c0) * D, D);
        tile_gemm_tn_acc(c, D, rows - r, ws.dp + r * cols + c0, cols, h.q + (i0 + r) * D, D,
                         h.dk + (j0 + c0) * D, D);
    }
    for (std::int64_t r0 = 0; r0 < rows; r0 += k_diag_rows) {
        const std::int64_t m = std::min(k_diag_rows, rows - r0);
        if (const std::int64_t n = seen(r0, m); n > 0)
            tile_gemm_nn_acc(m, D, n, ws.dp + r0 * cols, cols, h.k + j0 * D, D,
                             h.dq + (i0 + r0) * D, D);
    }
}

/// Backward for query rows [i0, i0 + rows) against key rows [j0, j0 + cols) of one head.
void bwd_tile(const attention_shape& s, const head_view& h, std::int64_t i0, std::int64_t rows,
              std::int64_t j0, std::int64_t cols, bool partial, const std::int64_t* qp,
              const std::int64_t* kp, const scratch& ws, std::int64_t next) {
    if (partial && !mask_active(s.mask))
        return bwd_diagonal(s, h, i0, rows, j0, cols, qp, kp, ws, next);
    bwd_block(s, h, i0, rows, j0, cols, cols, partial, qp, kp, ws, next);
}

/// Backward of one query head against the whole K/V block. Key tiles outer, so a tile's
/// dK/dV rows stay in cache across the query tiles.
void bwd_head(const attention_shape& s, const head_view& h, const std::int64_t* q_pos,
              const std::int64_t* k_pos, const scratch& ws) {
    auto first_row = [&](std::int64_t j0) { // the first query row a key tile's keys reach
        return s.causal ? std::lower_bound(q_pos, q_pos + s.q_len, k_pos[j0]) - q_pos : 0;
    };
    for (std::int64_t j0 = 0; j0 < s.k_len; j0 += ws.k_tile) {
        const std::int64_t cols = std::min(ws.k_tile, s.k_len - j0);
        const std::int64_t i_begin = first_row(j0);
        // The query rows taken after each tile: the next query tile, then the next key tile's
        // first (their Q, dO and dQ are fetched toward L2 meanwhile).
        const std::int64_t after = j0 + ws.k_tile < s.k_len ? first_row(j0 + ws.k_tile) : s.q_len;
        if (ws.kt && i_begin < s.q_len) { // the key tile's Kᵀ, Vᵀ for the tile products
            pack_transposed(h.k + j0 * s.head_dim, cols, s.head_dim, ws.kt);
            pack_transposed(h.v + j0 * s.head_dim, cols, s.head_dim, ws.vt);
        }
        for (std::int64_t i0 = i_begin; i0 < s.q_len; i0 += ws.q_tile) {
            const std::int64_t rows = std::min(ws.q_tile, s.q_len - i0);
            const block_mask mask = tile_class(s, q_pos + i0, rows, k_pos + j0, cols);
            if (mask != block_mask::masked)
                bwd_tile(s, h, i0, rows, j0, cols, mask == block_mask::partial, q_pos + i0,
                         k_pos + j0, ws,
                         i0 + rows < s.q_len ? i0 + rows
                         : after < s.q_len   ? after
                                             : -1);
        }
    }
}

/// Worker threads for a call: the workspace's, capped by the launcher's BLAS budget.
int call_threads(attention_workspace& ws) {
    const auto tile = static_cast<std::size_t>(ws.m_tiles.q_tile * ws.m_tiles.k_tile);
    const auto pack = static_cast<std::size_t>(2 * packed_size(ws.m_tiles.k_tile, 128));
    if (ws.m_workers < 1 || ws.m_scores.size() < tile * ws.m_workers ||
        (tile_gemm_avx512() && ws.m_pack.size() < pack * ws.m_workers))
        attention_workspace_reserve(ws, ws.m_tiles, ws.m_workers);
    return std::max(1, std::min(ws.m_workers, blas_threads()));
}

} // namespace

void attention_fwd_init(const attention_shape& shape, float* o, float* lse) {
    std::fill(o, o + attention_q_elems(shape), 0.0f);
    std::fill(lse, lse + shape.batch * shape.heads * shape.q_len, k_neg_inf);
}

void attention_fwd_cpu(const attention_shape& s, const float* q, const float* k, const float* v,
                       const std::int64_t* q_pos, const std::int64_t* k_pos, float* o, float* lse,
                       attention_workspace& ws, elem round) {
    check_attention_cpu_shape(s);
    const int threads = call_threads(ws);
    if (s.k_len == 0 || s.q_len == 0)
        return;
    const attention_tiles tiles = call_tiles(ws, s);
    const std::int64_t bq = tiles.q_tile;
    const std::int64_t q_tiles = (s.q_len + bq - 1) / bq;
    // Items: (query tile, batch * head), each independent in the forward. Last query tiles
    // first: under a causal mask they see the most keys, so the costliest go out first.
    const std::int64_t heads = s.batch * s.heads;
    const std::int64_t bk = tiles.k_tile, k_tiles = (s.k_len + bk - 1) / bk;
    const std::int64_t kt_tile = packed_size(bk, s.head_dim);
    // One query and one key tile a head (short sequences): each item packs its head's Kᵀ and V
    // just before use, into its worker's slice, where they stay in L1/L2 (packed for all heads
    // first, they came back from L3: 3% of the forward at S=256).
    const bool per_item = tile_gemm_avx512() && q_tiles == 1 && k_tiles == 1;
    if (tile_gemm_avx512() && !per_item) { // Kᵀ and V of every kv head by key tile, once
        const auto n = static_cast<std::size_t>(s.batch * s.kv_heads * k_tiles * 2 * kt_tile);
        if (ws.m_kt.size() < n)
            ws.m_kt.resize(n);
        parallel_items(threads, s.batch * s.kv_heads * k_tiles, [&](int, std::int64_t t) {
            const std::int64_t j0 = t % k_tiles * bk, kv = t / k_tiles;
            const std::int64_t at = (kv * s.k_len + j0) * s.head_dim,
                               n = std::min(bk, s.k_len - j0);
            pack_transposed(k + at, n, s.head_dim, ws.m_kt.data() + 2 * t * kt_tile);
            pack_panels(v + at, n, s.head_dim, s.head_dim, ws.m_kt.data() + (2 * t + 1) * kt_tile);
        });
    }
    parallel_items(threads, heads * q_tiles, [&](int worker, std::int64_t item) {
        const std::int64_t bh = item % heads, i0 = (q_tiles - 1 - item / heads) * bq;
        const head_offsets off = offsets_of(s, bh / s.heads, bh % s.heads);
        head_view view{q + off.q, k + off.kv,    v + off.kv, nullptr, nullptr, nullptr,
                       o + off.q, lse + off.row, nullptr,    nullptr, nullptr};
        scratch x = scratch_of(ws, worker, tiles);
        if (per_item) {
            pack_transposed(k + off.kv, s.k_len, s.head_dim, x.kt);
            pack_panels(v + off.kv, s.k_len, s.head_dim, s.head_dim, x.kt + kt_tile);
            view.kt = x.kt;
            view.kt_tile = kt_tile;
        } else if (tile_gemm_avx512()) {
            view.kt = ws.m_kt.data() + off.kv / (s.k_len * s.head_dim) * k_tiles * 2 * kt_tile;
            view.kt_tile = kt_tile;
        }
        x.round = round;
        fwd_q_tile(s, view, i0, std::min(bq, s.q_len - i0), q_pos, k_pos, x);
    });
}

void attention_bwd_cpu(const attention_shape& s, const float* q, const float* k, const float* v,
                       const float* d_o, const float* lse, const float* delta,
                       const std::int64_t* q_pos, const std::int64_t* k_pos, float* dq, float* dk,
                       float* dv, attention_workspace& ws, elem round) {
    check_attention_cpu_shape(s);
    const int threads = call_threads(ws);
    if (s.k_len == 0 || s.q_len == 0)
        return;
    const std::int64_t group = s.heads / s.kv_heads;
    const attention_tiles tiles = call_tiles(ws, s);
    // Items: (batch, kv head); each owns its dK/dV rows and its query heads' dQ rows.
    parallel_items(threads, s.batch * s.kv_heads, [&](int worker, std::int64_t item) {
        for (std::int64_t g = 0; g < group; ++g) {
            const head_offsets off =
                offsets_of(s, item / s.kv_heads, (item % s.kv_heads) * group + g);
            const head_view view{q + off.q,     k + off.kv,      v + off.kv, d_o + off.q,
                                 lse + off.row, delta + off.row, nullptr,    nullptr,
                                 dq + off.q,    dk + off.kv,     dv + off.kv};
            scratch x = scratch_of(ws, worker, tiles);
            x.round = round;
            bwd_head(s, view, q_pos, k_pos, x);
        }
    });
}

} // namespace ringscale::kernels::cpu
