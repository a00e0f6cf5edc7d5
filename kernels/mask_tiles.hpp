// The attention mask (kernels/mask.hpp) at the granularity of the CUDA kernels' tiles: the
// key positions a run of query rows may see, the query positions that may see a run of keys
// (so a thread block loads only the tiles that can hold a visible pair), a warp tile's
// decision (skip, whole, per element), and the per-element test against a row's key range
// computed once. Host and device (RINGSCALE_HD), free of CUDA types: the tile logic the
// kernels run is unit-tested on the CPU against mask_visible (tests/kernels/test_mask_tiles.cpp).
#pragma once

#include "kernels/mask.hpp"

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

} // namespace ringscale::kernels
