// The attention mask (kernels/mask.hpp) at the granularity of the CUDA kernels' tiles: the
// key positions a run of query rows may see, the query positions that may see a run of keys
// (so a thread block loads only the tiles that can hold a visible pair), a warp tile's
// decision (skip, whole, per element), and the per-element test against a row's key range
// computed once; then the same over a call's positions as the sm80 kernels take them (the key
// rows a forward block loads, the query rows a backward block walks, a forward warp tile's
// decision and its per-element pass over the C fragments). Host and device (RINGSCALE_HD),
// free of CUDA types: the tile logic the kernels run is unit-tested on the CPU against
// mask_visible (tests/kernels/test_mask_tiles.cpp, which also replays the kernels' loops).
#pragma once

#include "kernels/attention_rows.hpp"
#include "kernels/mask.hpp"

#include <cmath>
#include <cstdint>

namespace ringscale::kernels {

/// The query positions that may see key position k under causal, window and documents: the
/// transpose of mask_row_range (k lies in mask_row_range(q) iff q lies in mask_col_range(k)).
RINGSCALE_HD key_range mask_col_range(const mask_view& m, bool causal, std::int64_t k) {
    key_range r{causal ? k : 0, k_pos_max};
    if (m.window > 0) {
        r.hi = k + m.window - 1; // q - W < k, whether causal or not
        if (!causal)
            r.lo = mask_max(r.lo, k - m.window + 1);
    }
    if (m.docs > 0) {
        const std::int64_t d = mask_doc_of(m, k);
        const std::int64_t* start = mask_doc_starts(m);
        r.lo = mask_max(r.lo, start[d]);
        r.hi = mask_min(r.hi, start[d + 1] - 1);
    }
    return r;
}

/// Key positions any query at a position in [qa, qb] may see under causal, window and
/// documents (both ends of mask_row_range grow with the query's position); empty when
/// lo > hi. A superset: the pair rules are not looked at.
RINGSCALE_HD key_range mask_keys_of_rows(const mask_view& m, bool causal, std::int64_t qa,
                                         std::int64_t qb) {
    return {mask_row_range(m, causal, qa).lo, mask_row_range(m, causal, qb).hi};
}

/// Query positions that may see any key at a position in [ka, kb], as mask_keys_of_rows.
RINGSCALE_HD key_range mask_rows_of_keys(const mask_view& m, bool causal, std::int64_t ka,
                                         std::int64_t kb) {
    return {mask_col_range(m, causal, ka).lo, mask_col_range(m, causal, kb).hi};
}

/// A warp tile's decision: query rows at positions in [qa, qb] against keys at positions in
/// [ka, kb] (the first and last valid ones). `ragged`: the tile also holds rows or keys past
/// the end of the operands, whose scores only a per-element pass masks, so a visible tile
/// becomes partial. masked: skip its products; visible: no per-element test.
RINGSCALE_HD block_mask mask_tile(const mask_view& m, bool causal, std::int64_t qa, std::int64_t qb,
                                  std::int64_t ka, std::int64_t kb, bool ragged) {
    const block_mask c = mask_classify(m, causal, qa, qb, ka, kb);
    return c == block_mask::visible && ragged ? block_mask::partial : c;
}

/// Whether key position k is visible to query position q whose mask_row_range is `r`:
/// mask_visible with the row's range computed once.
RINGSCALE_HD bool mask_visible_in(const mask_view& m, const key_range& r, std::int64_t q,
                                  std::int64_t k) {
    return k >= r.lo && k <= r.hi && mask_pair_kept(m, q, k);
}

/// Rows [begin, end) of n sorted positions that lie in [r.lo, r.hi], given count(limit): the
/// number of rows at a position <= limit (a binary search, or closed form for a contiguous
/// run). begin >= end when none does.
struct row_span {
    std::int64_t begin = 0, end = 0;
};

template <class Count>
RINGSCALE_HD row_span mask_rows_within(const key_range& r, std::int64_t n, Count count) {
    if (r.lo > r.hi)
        return {0, 0};
    return {r.lo <= 0 ? 0 : count(r.lo - 1), r.hi >= k_pos_max ? n : count(r.hi)};
}

/// Rows [begin, end) of one side of a call (n rows at row_position(pos, first, i)) whose
/// positions lie in r.
RINGSCALE_HD row_span mask_side_within(const std::int64_t* pos, std::int64_t first, std::int64_t n,
                                       const key_range& r) {
    return mask_rows_within(r, n,
                            [&](std::int64_t limit) { return rows_at_most(pos, first, n, limit); });
}

// The kernels' decisions over a call's positions. `Pos` is the kernels' attention_positions
// (kernels/cuda/attention_fwd.cuh): q_pos, k_pos (arrays, or nullptr) and q_first, k_first.

/// Forward: the key rows [begin, end) of a call that its query rows [i0, i_last] may see.
template <class Pos>
RINGSCALE_HD row_span mask_key_rows(const mask_view& m, bool causal, const Pos& pos,
                                    std::int64_t k_len, std::int64_t i0, std::int64_t i_last) {
    const key_range keys = mask_keys_of_rows(m, causal, row_position(pos.q_pos, pos.q_first, i0),
                                             row_position(pos.q_pos, pos.q_first, i_last));
    return mask_side_within(pos.k_pos, pos.k_first, k_len, keys);
}

/// Forward: a warp tile's decision (mask_tile): query rows at positions [w_first, w_last]
/// against the `keys` key rows from j0 < k_len (ragged past k_len).
template <int keys, class Pos>
RINGSCALE_HD block_mask mask_key_tile(const mask_view& m, bool causal, const Pos& pos,
                                      std::int64_t k_len, std::int64_t w_first, std::int64_t w_last,
                                      std::int64_t j0) {
    const std::int64_t j_last = (j0 + keys < k_len ? j0 + keys : k_len) - 1;
    return mask_tile(m, causal, w_first, w_last, row_position(pos.k_pos, pos.k_first, j0),
                     row_position(pos.k_pos, pos.k_first, j_last), j0 + keys > k_len);
}

/// Backward: the query rows [begin, end) of a call that may see any of the `keys` key rows
/// from j0 < k_len.
template <int keys, class Pos>
RINGSCALE_HD row_span mask_query_rows(const mask_view& m, bool causal, const Pos& pos,
                                      std::int64_t q_len, std::int64_t k_len, std::int64_t j0) {
    const std::int64_t j_last = (j0 + keys < k_len ? j0 + keys : k_len) - 1;
    const key_range rows = mask_rows_of_keys(m, causal, row_position(pos.k_pos, pos.k_first, j0),
                                             row_position(pos.k_pos, pos.k_first, j_last));
    return mask_side_within(pos.q_pos, pos.q_first, q_len, rows);
}

/// Forward: mask the raw scores of a partial warp tile under `m` (one lane's share of the
/// m16n8k16 C fragments, kernels/cuda/attention_device.cuh): s[n][i] is row r = i / 2
/// (position row_pos[r]) against key j0 + 8 n + 2 (lane % 4) + i % 2; -inf where that key is
/// past k_len or not visible to the row. Each row's key range is computed once.
template <int nblocks, class Pos>
RINGSCALE_HD void mask_tile_scores(const mask_view& m, bool causal, const Pos& pos,
                                   std::int64_t k_len, float (&s)[nblocks][4], std::int64_t j0,
                                   const std::int64_t (&row_pos)[2], int lane) {
    const key_range range[2] = {mask_row_range(m, causal, row_pos[0]),
                                mask_row_range(m, causal, row_pos[1])};
    RINGSCALE_UNROLL
    for (int n = 0; n < nblocks; ++n) {
        RINGSCALE_UNROLL
        for (int c = 0; c < 2; ++c) {
            const std::int64_t j = j0 + n * 8 + 2 * (lane % 4) + c;
            const bool valid = j < k_len;
            const std::int64_t kp = valid ? row_position(pos.k_pos, pos.k_first, j) : 0;
            RINGSCALE_UNROLL
            for (int r = 0; r < 2; ++r) {
                if (!valid || !mask_visible_in(m, range[r], row_pos[r], kp))
                    s[n][2 * r + c] = -INFINITY;
            }
        }
    }
}

} // namespace ringscale::kernels
