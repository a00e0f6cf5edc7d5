// Attention masks beyond causal, one description for every kernel and scheme: a sliding
// window, packed documents, a block-sparse pattern and LongNet's dilated segments. A key at
// global position k is visible to a query at global position q iff every rule given holds:
//   causal (attention_shape::causal): k <= q;
//   window W: q - W < k (causal: the W keys up to and including q), or |q - k| < W;
//   documents: q and k lie in the same document;
//   block-sparse (block B): the block pair (q / B, k / B) is kept;
//   dilation (segments w_i with rates r_i): for some i, q and k lie in the same segment of
//     length w_i and both sit at an offset in it divisible by r_i.
// mask_view is what the kernels read: plain values and pointers (each array in host memory
// and, for CUDA, a device copy), copied by value into a CUDA kernel. The predicates and the
// tile classification below compile for host and device; the arrays' owner (attention_mask,
// kernels/mask_spec.hpp) and the exact pair counts (kernels/mask_count.hpp) are host code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define RINGSCALE_HD __host__ __device__ __forceinline__
#else
#define RINGSCALE_HD inline
#endif
// Unroll a loop over a register array in device code (host compilers warn on the pragma).
#if defined(__CUDA_ARCH__)
#define RINGSCALE_UNROLL _Pragma("unroll")
#else
#define RINGSCALE_UNROLL
#endif

namespace ringscale::kernels {

/// Dilation patterns a mask holds at most.
constexpr int max_dilations = 4;

/// The mask as kernels see it. Every rule is off at its zero value, so a default view is no
/// mask beyond the shape's causal flag. Pointers are not owned.
struct mask_view {
    std::int64_t window = 0;                     ///< W > 0: sliding window of W keys
    std::int64_t docs = 0;                       ///< documents packed into the sequence (0: none)
    const std::int64_t* doc_start = nullptr;     ///< host [docs + 1]: first positions, then S
    const std::int64_t* doc_start_dev = nullptr; ///< the same on the device (CUDA kernels)
    std::int64_t block = 0;                      ///< block-sparse block size in tokens (0: none)
    std::int64_t blocks = 0;                     ///< blocks per side: ceil(S / block)
    const std::uint8_t* keep = nullptr;          ///< host [blocks * blocks]: 1 = the pair is kept
    const std::uint8_t* keep_dev = nullptr;      ///< the same on the device
    int dilations = 0;                           ///< dilation patterns (0: none)
    std::int64_t segment[max_dilations] = {};
    std::int64_t rate[max_dilations] = {};
};

/// Visibility of a (query rows, key rows) block under the mask.
enum class block_mask { visible, masked, partial };

/// Inclusive range of key positions [lo, hi] a query may see under causal, window and
/// documents; empty when lo > hi.
struct key_range {
    std::int64_t lo = 0, hi = 0;
};

constexpr std::int64_t k_pos_max = 0x7fffffffffffffffll;

RINGSCALE_HD std::int64_t mask_min(std::int64_t a, std::int64_t b) {
    return a < b ? a : b;
}
RINGSCALE_HD std::int64_t mask_max(std::int64_t a, std::int64_t b) {
    return a > b ? a : b;
}

/// True when the view has a rule beyond causal.
RINGSCALE_HD bool mask_active(const mask_view& m) {
    return m.window > 0 || m.docs > 0 || m.block > 0 || m.dilations > 0;
}

/// True when visibility is not an interval of key positions per query (block-sparse or
/// dilation): a partial tile must be tested pair by pair.
RINGSCALE_HD bool mask_has_pair_rules(const mask_view& m) {
    return m.block > 0 || m.dilations > 0;
}

RINGSCALE_HD const std::int64_t* mask_doc_starts(const mask_view& m) {
#ifdef __CUDA_ARCH__
    return m.doc_start_dev;
#else
    return m.doc_start;
#endif
}

RINGSCALE_HD const std::uint8_t* mask_keep(const mask_view& m) {
#ifdef __CUDA_ARCH__
    return m.keep_dev;
#else
    return m.keep;
#endif
}

/// Index of the document holding position p (m.docs > 0).
RINGSCALE_HD std::int64_t mask_doc_of(const mask_view& m, std::int64_t p) {
    const std::int64_t* start = mask_doc_starts(m);
    std::int64_t lo = 0, hi = m.docs; // the last d with start[d] <= p; start[0] = 0
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (start[mid] <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/// The key positions query q may see under causal, window and documents.
RINGSCALE_HD key_range mask_row_range(const mask_view& m, bool causal, std::int64_t q) {
    key_range r{0, causal ? q : k_pos_max};
    if (m.window > 0) {
        r.lo = mask_max(r.lo, q - m.window + 1);
        if (!causal)
            r.hi = mask_min(r.hi, q + m.window - 1);
    }
    if (m.docs > 0) {
        const std::int64_t d = mask_doc_of(m, q);
        const std::int64_t* start = mask_doc_starts(m);
        r.lo = mask_max(r.lo, start[d]);
        r.hi = mask_min(r.hi, start[d + 1] - 1);
    }
    return r;
}

/// The block-sparse and dilation rules for the pair (q, k).
RINGSCALE_HD bool mask_pair_kept(const mask_view& m, std::int64_t q, std::int64_t k) {
    if (m.block > 0 && !mask_keep(m)[(q / m.block) * m.blocks + k / m.block])
        return false;
    if (m.dilations == 0)
        return true;
    for (int i = 0; i < m.dilations; ++i) {
        const std::int64_t w = m.segment[i], r = m.rate[i];
        if (q / w == k / w && (q % w) % r == 0 && (k % w) % r == 0)
            return true;
    }
    return false;
}

/// Whether key position k is visible to query position q.
RINGSCALE_HD bool mask_visible(const mask_view& m, bool causal, std::int64_t q, std::int64_t k) {
    const key_range r = mask_row_range(m, causal, q);
    return k >= r.lo && k <= r.hi && mask_pair_kept(m, q, k);
}

/// Block-sparse part of classify: the kept block pairs of the box (at most 64 looked at).
RINGSCALE_HD block_mask mask_classify_blocks(const mask_view& m, std::int64_t qa, std::int64_t qb,
                                             std::int64_t ka, std::int64_t kb) {
    const std::int64_t q0 = qa / m.block, q1 = qb / m.block, k0 = ka / m.block, k1 = kb / m.block;
    if ((q1 - q0 + 1) * (k1 - k0 + 1) > 64)
        return block_mask::partial;
    const std::uint8_t* keep = mask_keep(m);
    bool any = false, all = true;
    for (std::int64_t i = q0; i <= q1; ++i)
        for (std::int64_t j = k0; j <= k1; ++j) {
            const bool kept = keep[i * m.blocks + j] != 0;
            any = any || kept;
            all = all && kept;
        }
    return !any ? block_mask::masked : all ? block_mask::visible : block_mask::partial;
}

/// Dilation part of classify: masked when no pattern's segments join the two ranges, visible
/// when a rate-1 pattern holds the whole box in one segment.
RINGSCALE_HD block_mask mask_classify_dilation(const mask_view& m, std::int64_t qa, std::int64_t qb,
                                               std::int64_t ka, std::int64_t kb) {
    bool any = false, full = false;
    for (int i = 0; i < m.dilations; ++i) {
        const std::int64_t w = m.segment[i];
        if (qa / w <= kb / w && ka / w <= qb / w)
            any = true;
        if (m.rate[i] == 1 && qa / w == qb / w && ka / w == kb / w && qa / w == ka / w)
            full = true;
    }
    return !any ? block_mask::masked : full ? block_mask::visible : block_mask::partial;
}

/// Classify every pair of a box of positions, queries in [qa, qb] and keys in [ka, kb]
/// (a tile's first and last positions): masked when no pair in the box is visible, visible
/// when every pair is, else partial. Conservative: a tile's real positions are a subset of
/// the box, so masked and visible are exact for them and partial may hide either.
RINGSCALE_HD block_mask mask_classify(const mask_view& m, bool causal, std::int64_t qa,
                                      std::int64_t qb, std::int64_t ka, std::int64_t kb) {
    bool full = true;
    if (causal) {
        if (ka > qb)
            return block_mask::masked;
        full = kb <= qa;
    }
    if (m.window > 0) {
        if (qa - kb >= m.window || (!causal && ka - qb >= m.window))
            return block_mask::masked;
        full = full && qb - ka < m.window && (causal || kb - qa < m.window);
    }
    if (m.docs > 0) {
        const std::int64_t dqa = mask_doc_of(m, qa), dqb = mask_doc_of(m, qb);
        const std::int64_t dka = mask_doc_of(m, ka), dkb = mask_doc_of(m, kb);
        if (dqb < dka || dkb < dqa)
            return block_mask::masked;
        full = full && dqa == dqb && dka == dkb && dqa == dka;
    }
    for (int rule = 0; rule < 2; ++rule) {
        const bool on = rule == 0 ? m.block > 0 : m.dilations > 0;
        if (!on)
            continue;
        const block_mask c = rule == 0 ? mask_classify_blocks(m, qa, qb, ka, kb)
                                       : mask_classify_dilation(m, qa, qb, ka, kb);
        if (c == block_mask::masked)
            return block_mask::masked;
        full = full && c == block_mask::visible;
    }
    return full ? block_mask::visible : block_mask::partial;
}

/// mask_classify of sorted position arrays; masked when either side is empty.
RINGSCALE_HD block_mask mask_classify_rows(const mask_view& m, bool causal,
                                           const std::int64_t* q_pos, std::int64_t q_count,
                                           const std::int64_t* k_pos, std::int64_t k_count) {
    if (q_count <= 0 || k_count <= 0)
        return block_mask::masked;
    return mask_classify(m, causal, q_pos[0], q_pos[q_count - 1], k_pos[0], k_pos[k_count - 1]);
}

} // namespace ringscale::kernels
