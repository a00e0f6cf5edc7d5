#include "kernels/mask_count.hpp"

#include <algorithm>
#include <numeric>

namespace ringscale::kernels {

namespace {

struct index_range {
    std::int64_t a = 0, b = 0;
};

/// The keys of k[from, to) inside [r.lo, r.hi].
index_range keys_in(const std::int64_t* k, std::int64_t from, std::int64_t to, key_range r) {
    if (r.lo > r.hi)
        return {from, from};
    const std::int64_t a = std::lower_bound(k + from, k + to, r.lo) - k;
    const std::int64_t b = std::upper_bound(k + a, k + to, r.hi) - k;
    return {a, b};
}

/// Pairs of query q with dilation: only keys of q's own segments can be visible.
std::int64_t count_row_dilated(const mask_view& m, bool causal, std::int64_t q,
                               const std::int64_t* k, std::int64_t nk) {
    key_range seg{k_pos_max, -1};
    for (int i = 0; i < m.dilations; ++i) {
        const std::int64_t w = m.segment[i];
        if ((q % w) % m.rate[i] != 0)
            continue;
        seg.lo = std::min(seg.lo, q / w * w);
        seg.hi = std::max(seg.hi, q / w * w + w - 1);
    }
    key_range r = mask_row_range(m, causal, q);
    r.lo = std::max(r.lo, seg.lo);
    r.hi = std::min(r.hi, seg.hi);
    const index_range in = keys_in(k, 0, nk, r);
    std::int64_t n = 0;
    for (std::int64_t j = in.a; j < in.b; ++j)
        n += mask_pair_kept(m, q, k[j]);
    return n;
}

/// End of the run of positions from `i` that share block `p[i] / block`.
std::int64_t run_end(const std::int64_t* p, std::int64_t i, std::int64_t n, std::int64_t block) {
    return std::upper_bound(p + i, p + n, (p[i] / block + 1) * block - 1) - p;
}

/// Block-sparse without dilation: each (query block run, key block run) pair once, the
/// interval rules classifying the kept ones.
std::int64_t count_blocks(const mask_view& m, bool causal, const std::int64_t* q, std::int64_t nq,
                          const std::int64_t* k, std::int64_t nk) {
    mask_view intervals = m;
    intervals.block = 0;
    std::int64_t total = 0;
    for (std::int64_t qi = 0; qi < nq;) {
        const std::int64_t qj = run_end(q, qi, nq, m.block);
        const std::int64_t qb = q[qi] / m.block;
        for (std::int64_t ki = 0; ki < nk;) {
            const std::int64_t kj = run_end(k, ki, nk, m.block);
            if (m.keep[qb * m.blocks + k[ki] / m.block]) {
                const block_mask c =
                    mask_classify(intervals, causal, q[qi], q[qj - 1], k[ki], k[kj - 1]);
                if (c == block_mask::visible)
                    total += (qj - qi) * (kj - ki);
                else if (c == block_mask::partial)
                    for (std::int64_t i = qi; i < qj; ++i) {
                        const index_range in =
                            keys_in(k, ki, kj, mask_row_range(intervals, causal, q[i]));
                        total += in.b - in.a;
                    }
            }
            ki = kj;
        }
        qi = qj;
    }
    return total;
}

} // namespace

std::int64_t count_visible(const mask_view& m, bool causal, const std::int64_t* q, std::int64_t nq,
                           const std::int64_t* k, std::int64_t nk) {
    if (nq <= 0 || nk <= 0)
        return 0;
    std::int64_t total = 0;
    if (m.dilations > 0) {
        for (std::int64_t i = 0; i < nq; ++i)
            total += count_row_dilated(m, causal, q[i], k, nk);
        return total;
    }
    if (m.block > 0)
        return count_blocks(m, causal, q, nq, k, nk);
    for (std::int64_t i = 0; i < nq; ++i) {
        const index_range in = keys_in(k, 0, nk, mask_row_range(m, causal, q[i]));
        total += in.b - in.a;
    }
    return total;
}

std::int64_t count_visible(const mask_view& m, bool causal, const std::vector<std::int64_t>& q,
                           const std::vector<std::int64_t>& k) {
    return count_visible(m, causal, q.data(), static_cast<std::int64_t>(q.size()), k.data(),
                         static_cast<std::int64_t>(k.size()));
}

bool any_visible(const mask_view& m, bool causal, const std::vector<std::int64_t>& q,
                 const std::vector<std::int64_t>& k) {
    return any_visible(m, causal, q.data(), static_cast<std::int64_t>(q.size()), k.data(),
                       static_cast<std::int64_t>(k.size()));
}

bool any_visible(const mask_view& m, bool causal, const std::int64_t* q, std::int64_t nq,
                 const std::int64_t* k, std::int64_t nk) {
    switch (mask_classify_rows(m, causal, q, nq, k, nk)) {
    case block_mask::masked:
        return false;
    case block_mask::visible:
        return true;
    case block_mask::partial:
        break;
    }
    // Tiles of 64 queries: most are decided by their box before any pair is counted.
    constexpr std::int64_t tile = 64;
    for (std::int64_t i0 = 0; i0 < nq; i0 += tile) {
        const std::int64_t rows = std::min(tile, nq - i0);
        const block_mask c = mask_classify_rows(m, causal, q + i0, rows, k, nk);
        if (c == block_mask::visible)
            return true;
        if (c == block_mask::partial && count_visible(m, causal, q + i0, rows, k, nk))
            return true;
    }
    return false;
}

std::vector<std::int64_t> all_positions(std::int64_t n) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(n));
    std::iota(out.begin(), out.end(), 0);
    return out;
}

} // namespace ringscale::kernels
