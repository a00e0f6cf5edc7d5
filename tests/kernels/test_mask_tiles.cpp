// The tile logic the CUDA attention kernels run on a mask (kernels/mask_tiles.hpp), on the
// CPU against mask_visible pair by pair: the ranges a thread block loads hold every visible
// pair, a skipped warp tile holds none, a whole tile holds only visible pairs, and the
// per-element test is mask_visible. Tiles of the kernels' sizes (forward: 16 rows of a warp x
// 64 keys; backward: 16 keys of a warp x 64 rows) over contiguous and zigzag-like positions.
#include "kernels/mask_spec.hpp"
#include "kernels/mask_tiles.hpp"
#include "kernels/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace ringscale::kernels;
using pos_t = std::vector<std::int64_t>;

namespace {

constexpr std::int64_t seq = 512;

struct mask_case {
    const char* name;
    mask_spec spec;
    bool causal;
};

mask_spec spec_of(std::int64_t window, const char* docs, double sparsity, const char* pattern,
                  std::int64_t block, const char* dilation) {
    mask_spec s;
    s.window = window;
    s.docs = docs;
    s.sparsity = sparsity;
    s.pattern = pattern;
    s.block = block;
    s.dilation = dilation;
    return s;
}

std::vector<mask_case> cases() {
    return {
        {"causal only", spec_of(0, "", -1, "random", 128, ""), true},
        {"window causal", spec_of(96, "", -1, "random", 128, ""), true},
        {"window", spec_of(40, "", -1, "random", 128, ""), false},
        {"docs causal", spec_of(0, "100+37+200+175", -1, "random", 128, ""), true},
        {"docs", spec_of(0, "uniform:16-160", -1, "random", 128, ""), false},
        {"window+docs", spec_of(50, "fixed:90", -1, "random", 128, ""), true},
        {"sparse random", spec_of(0, "", 0.5, "random", 32, ""), false},
        {"sparse random causal", spec_of(0, "", 0.6, "random", 64, ""), true},
        {"sparse local_global", spec_of(0, "", 0.7, "local_global", 16, ""), true},
        {"dilation", spec_of(0, "", -1, "random", 128, "64:1+128:4"), true},
        {"dilation+docs", spec_of(0, "fixed:200", -1, "random", 128, "32:2+256:8"), false},
    };
}

// Rows of one rank's share: a contiguous run, or zigzag's two chunks (rank 1 of 4: chunks
// 1 and 6 of 8).
std::vector<pos_t> position_sets() {
    pos_t contiguous(seq / 2), zigzag;
    for (std::int64_t i = 0; i < seq / 2; ++i)
        contiguous[static_cast<std::size_t>(i)] = seq / 4 + i;
    for (const std::int64_t chunk : {1, 6})
        for (std::int64_t i = 0; i < seq / 8; ++i)
            zigzag.push_back(chunk * seq / 8 + i);
    pos_t all(seq);
    for (std::int64_t i = 0; i < seq; ++i)
        all[static_cast<std::size_t>(i)] = i;
    return {contiguous, zigzag, all};
}

// count(limit) as the kernels' count_at_most: rows at a position <= limit.
auto counter(const pos_t& p) {
    return [&p](std::int64_t limit) {
        return static_cast<std::int64_t>(std::upper_bound(p.begin(), p.end(), limit) - p.begin());
    };
}

// Every visible pair of rows [i0, i1) x keys [j0, j1), and whether all are.
struct pair_count {
    std::int64_t visible = 0, total = 0;
};

pair_count brute(const mask_view& m, bool causal, const pos_t& q, std::int64_t i0, std::int64_t i1,
                 const pos_t& k, std::int64_t j0, std::int64_t j1) {
    pair_count c;
    for (std::int64_t i = i0; i < i1; ++i)
        for (std::int64_t j = j0; j < j1; ++j) {
            c.visible += mask_visible(m, causal, q[static_cast<std::size_t>(i)],
                                      k[static_cast<std::size_t>(j)]);
            ++c.total;
        }
    return c;
}

// Check the decisions for tiles of `rows` query rows x `cols` keys, as the kernels take them
// (tiles from row 0 and key 0; the last ones ragged).
void check_tiles(const mask_view& m, bool causal, const pos_t& q, const pos_t& k, std::int64_t rows,
                 std::int64_t cols, const std::string& what) {
    const auto nq = static_cast<std::int64_t>(q.size()), nk = static_cast<std::int64_t>(k.size());
    for (std::int64_t i0 = 0; i0 < nq; i0 += rows)
        for (std::int64_t j0 = 0; j0 < nk; j0 += cols) {
            const std::int64_t i1 = std::min(i0 + rows, nq), j1 = std::min(j0 + cols, nk);
            const bool ragged = i1 - i0 < rows || j1 - j0 < cols;
            const block_mask t = mask_tile(
                m, causal, q[static_cast<std::size_t>(i0)], q[static_cast<std::size_t>(i1 - 1)],
                k[static_cast<std::size_t>(j0)], k[static_cast<std::size_t>(j1 - 1)], ragged);
            const pair_count c = brute(m, causal, q, i0, i1, k, j0, j1);
            if (t == block_mask::masked) {
                EXPECT_EQ(c.visible, 0) << what << " tile " << i0 << "," << j0;
            }
            if (t == block_mask::visible) {
                EXPECT_EQ(c.visible, c.total) << what << " tile " << i0 << "," << j0;
                EXPECT_FALSE(ragged) << what;
            }
        }
}

} // namespace

TEST(mask_tiles, col_range_is_the_transpose_of_row_range) {
    for (const mask_case& mc : cases()) {
        const attention_mask mask(mc.spec, seq, mc.causal);
        const mask_view m = mask.view();
        for (std::int64_t k = 0; k < seq; k += 3) {
            const key_range cr = mask_col_range(m, mc.causal, k);
            for (std::int64_t q = 0; q < seq; ++q) {
                const key_range rr = mask_row_range(m, mc.causal, q);
                ASSERT_EQ(k >= rr.lo && k <= rr.hi, q >= cr.lo && q <= cr.hi)
                    << mc.name << " q=" << q << " k=" << k;
            }
        }
    }
}

TEST(mask_tiles, block_ranges_hold_every_visible_pair) {
    std::int64_t shrunk = 0; // ranges that leave rows out (the test would pass on "all rows")
    for (const mask_case& mc : cases()) {
        const attention_mask mask(mc.spec, seq, mc.causal);
        const mask_view m = mask.view();
        for (const pos_t& q : position_sets())
            for (const pos_t& k : position_sets()) {
                const auto nq = static_cast<std::int64_t>(q.size());
                const auto nk = static_cast<std::int64_t>(k.size());
                // Forward: a block of 128 query rows loads keys [begin, end).
                for (std::int64_t i0 = 0; i0 < nq; i0 += 128) {
                    const std::int64_t i1 = std::min(i0 + 128, nq);
                    const row_span s = mask_rows_within(
                        mask_keys_of_rows(m, mc.causal, q[static_cast<std::size_t>(i0)],
                                          q[static_cast<std::size_t>(i1 - 1)]),
                        nk, counter(k));
                    shrunk += s.begin > 0 || s.end < nk;
                    const pair_count out = brute(m, mc.causal, q, i0, i1, k, 0, nk);
                    const pair_count in = s.begin < s.end
                                              ? brute(m, mc.causal, q, i0, i1, k, s.begin, s.end)
                                              : pair_count{};
                    EXPECT_EQ(in.visible, out.visible) << mc.name << " fwd rows " << i0;
                }
                // Backward: a block of 64 keys walks query rows [begin, end).
                for (std::int64_t j0 = 0; j0 < nk; j0 += 64) {
                    const std::int64_t j1 = std::min(j0 + 64, nk);
                    const row_span s = mask_rows_within(
                        mask_rows_of_keys(m, mc.causal, k[static_cast<std::size_t>(j0)],
                                          k[static_cast<std::size_t>(j1 - 1)]),
                        nq, counter(q));
                    const pair_count out = brute(m, mc.causal, q, 0, nq, k, j0, j1);
                    const pair_count in = s.begin < s.end
                                              ? brute(m, mc.causal, q, s.begin, s.end, k, j0, j1)
                                              : pair_count{};
                    EXPECT_EQ(in.visible, out.visible) << mc.name << " bwd keys " << j0;
                }
            }
    }
    EXPECT_GT(shrunk, 0);
}

TEST(mask_tiles, warp_tile_decisions_are_sound) {
    for (const mask_case& mc : cases()) {
        const attention_mask mask(mc.spec, seq, mc.causal);
        const mask_view m = mask.view();
        for (const pos_t& q : position_sets())
            for (const pos_t& k : position_sets()) {
                check_tiles(m, mc.causal, q, k, 16, 64, std::string(mc.name) + " fwd");
                check_tiles(m, mc.causal, q, k, 64, 16, std::string(mc.name) + " bwd");
                // Ragged ends: lengths that are not multiples of the tiles.
                const pos_t q_short(q.begin(), q.end() - 5), k_short(k.begin(), k.end() - 9);
                check_tiles(m, mc.causal, q_short, k_short, 16, 64, std::string(mc.name) + " r");
            }
    }
}

TEST(mask_tiles, tile_decisions_skip_and_keep_whole_tiles) {
    // A causal window of 200 keys: tiles far off the diagonal are skipped,
    // tiles inside the band are whole (not partial): the decision is not "always partial".
    const attention_mask mask(spec_of(200, "", -1, "random", 128, ""), seq, true);
    const mask_view m = mask.view();
    EXPECT_EQ(mask_tile(m, true, 400, 415, 0, 63, false), block_mask::masked);
    EXPECT_EQ(mask_tile(m, true, 400, 415, 256, 319, false), block_mask::visible);
    EXPECT_EQ(mask_tile(m, true, 400, 415, 256, 319, true), block_mask::partial);
    EXPECT_EQ(mask_tile(m, true, 400, 415, 384, 447, false), block_mask::partial);
}

TEST(mask_tiles, per_element_test_is_mask_visible) {
    for (const mask_case& mc : cases()) {
        const attention_mask mask(mc.spec, seq, mc.causal);
        const mask_view m = mask.view();
        for (std::int64_t q = 0; q < seq; q += 7) {
            const key_range r = mask_row_range(m, mc.causal, q);
            for (std::int64_t k = 0; k < seq; ++k)
                ASSERT_EQ(mask_visible_in(m, r, q, k), mask_visible(m, mc.causal, q, k))
                    << mc.name << " q=" << q << " k=" << k;
        }
    }
}

TEST(mask_tiles, rows_within_bounds) {
    const pos_t p = {3, 5, 8, 13, 21};
    const auto count = counter(p);
    EXPECT_EQ(mask_rows_within({5, 13}, 5, count).begin, 1);
    EXPECT_EQ(mask_rows_within({5, 13}, 5, count).end, 4);
    EXPECT_EQ(mask_rows_within({0, k_pos_max}, 5, count).end, 5);
    EXPECT_EQ(mask_rows_within({22, 30}, 5, count).begin, 5);
    const row_span empty = mask_rows_within({9, 4}, 5, count);
    EXPECT_GE(empty.begin, empty.end);
}
