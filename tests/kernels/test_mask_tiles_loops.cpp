// The sm80 CUDA attention kernels' loops under a mask, replayed on the CPU with the very
// functions the kernels call (kernels/mask_tiles.hpp, kernels/attention_rows.hpp): which key
// tiles a forward block loads and how each warp takes each tile (skip, whole, per element
// through mask_tile_scores on every lane's C fragments), and which query tiles a backward
// block walks and how each warp takes them (bwd_probs' per-element test). Over every pair of
// a call, each visible pair must be let through exactly once and no other pair at all, for
// query and key positions of the contiguous, zigzag and striped layouts (arrays, and the
// no-array contiguous path), lengths that are not multiples of the tiles, and masks of every
// kind. The loop bounds and sizes are transcribed from kernels/cuda/attention_fwd.cu and
// attention_bwd.cu; what runs on the device beyond them is checked by
// tests/kernels/cuda/test_attention_mask_gpu.cpp on a GPU.
#include "kernels/attention_rows.hpp"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/layout.hpp"
#include "kernels/mask_spec.hpp"
#include "kernels/mask_tiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace ringscale::kernels;
using pos_t = std::vector<std::int64_t>;
using ringscale::kernels::cuda::attention_positions;

namespace {

// attention_fwd.cu: blocks of 128 query rows, 16 per warp, key tiles of 64.
constexpr int fwd_rows = 128, fwd_warps = 8, fwd_keys = 64;
// attention_bwd_block.cuh: blocks of 64 keys, 16 per warp, query tiles of 64 rows.
constexpr int bwd_keys = 64, bwd_warps = 4, bwd_rows = 64;

struct mask_case {
    const char* name;
    std::int64_t window;
    const char* docs;
    double sparsity;
    const char* pattern;
    std::int64_t block;
    const char* dilation;
    bool causal;
};

// Over a sequence of 420 tokens: 2 ranks hold 210 rows, 3 ranks 140 (zigzag chunks of 105, 70).
const mask_case k_masks[] = {
    {"window causal", 40, "", -1, "random", 128, "", true},
    {"window", 50, "", -1, "random", 128, "", false},
    {"window wide causal", 200, "", -1, "random", 128, "", true},
    {"window wide", 170, "", -1, "random", 128, "", false},
    {"docs causal", 0, "100+37+120+43+120", -1, "random", 128, "", true},
    {"docs", 0, "fixed:64", -1, "random", 128, "", false},
    {"docs window", 30, "uniform:16-96", -1, "random", 128, "", true},
    {"sparse random causal", 0, "", 0.5, "random", 16, "", true},
    {"sparse random b100", 0, "", 0.4, "random", 100, "", false},
    {"sparse local_global", 0, "", 0.7, "local_global", 16, "", true},
    {"window local_global", 90, "", 0.5, "local_global", 32, "", true},
    {"dilation", 0, "", -1, "random", 128, "60:2+150:5", true},
    {"docs dilation", 0, "fixed:120", -1, "random", 128, "20:4+420:3", false},
};

// Over 36 tokens: calls of 18 and 12 rows (zigzag chunks of 9 and 6), shorter than a warp's
// 16 rows or a 64-key tile.
const mask_case k_tiny_masks[] = {
    {"tiny window causal", 5, "", -1, "random", 128, "", true},
    {"tiny window", 7, "", -1, "random", 128, "", false},
    {"tiny docs causal", 0, "fixed:10", -1, "random", 128, "", true},
    {"tiny docs window", 4, "7+20+9", -1, "random", 128, "", false},
    {"tiny sparse causal", 0, "", 0.5, "random", 4, "", true},
    {"tiny local_global", 0, "", 0.5, "local_global", 8, "", false},
    {"tiny dilation", 0, "", -1, "random", 128, "12:3+36:4", true},
};

mask_spec spec_of(const mask_case& c) {
    mask_spec s;
    s.window = c.window;
    s.docs = c.docs;
    s.sparsity = c.sparsity;
    s.pattern = c.pattern;
    s.block = c.block;
    s.dilation = c.dilation;
    return s;
}

struct side {
    std::string name;
    pos_t pos;
};

// One rank's rows under each layout (2 and 3 ranks), and the whole sequence.
std::vector<side> sides(std::int64_t seq) {
    std::vector<side> out;
    for (const layout lay : {layout::contiguous, layout::zigzag, layout::striped})
        for (const int ranks : {2, 3}) {
            const int rank = ranks - 1;
            out.push_back({std::string(to_string(lay)) + "/" + std::to_string(ranks),
                           layout_positions(lay, seq, ranks, rank)});
        }
    pos_t all(seq);
    for (std::int64_t i = 0; i < seq; ++i)
        all[static_cast<std::size_t>(i)] = i;
    out.push_back({"all", all});
    return out;
}

bool contiguous(const pos_t& p) {
    return p.back() - p.front() + 1 == static_cast<std::int64_t>(p.size());
}

struct call {
    mask_view m;
    bool causal;
    const pos_t& q;
    const pos_t& k;
    attention_positions pos; // arrays, or nullptr for a contiguous side
    std::int64_t nq() const { return static_cast<std::int64_t>(q.size()); }
    std::int64_t nk() const { return static_cast<std::int64_t>(k.size()); }
};

// seen[i * nk + j]: how often the replayed kernel let pair (i, j) into its sums.
using seen_t = std::vector<int>;

// attention_fwd_kernel<masked = true>'s loops and decisions.
seen_t replay_fwd(const call& c) {
    const std::int64_t nq = c.nq(), nk = c.nk();
    seen_t seen(static_cast<std::size_t>(nq * nk), 0);
    const attention_positions& pos = c.pos;
    for (std::int64_t i0 = 0; i0 < nq; i0 += fwd_rows) {
        const std::int64_t i_last = std::min<std::int64_t>(i0 + fwd_rows, nq) - 1;
        const row_span keys = mask_key_rows(c.m, c.causal, pos, nk, i0, i_last);
        if (keys.begin >= keys.end)
            continue;
        const std::int64_t t_first = keys.begin / fwd_keys;
        const std::int64_t tiles = (keys.end + fwd_keys - 1) / fwd_keys;
        for (int warp = 0; warp < fwd_warps; ++warp) {
            const std::int64_t w0 = i0 + warp * 16;
            const bool live = w0 < nq;
            const std::int64_t w_first = live ? row_position(pos.q_pos, pos.q_first, w0) : 0;
            const std::int64_t w_last =
                live ? row_position(pos.q_pos, pos.q_first, std::min(w0 + 15, nq - 1)) : 0;
            for (std::int64_t t = t_first; t < tiles; ++t) {
                const std::int64_t j0 = t * fwd_keys;
                const block_mask cls =
                    live ? mask_key_tile<fwd_keys>(c.m, c.causal, pos, nk, w_first, w_last, j0)
                         : block_mask::masked;
                if (cls == block_mask::masked)
                    continue;
                for (int lane = 0; lane < 32; ++lane) {
                    std::int64_t row_pos[2];
                    for (int r = 0; r < 2; ++r) {
                        const std::int64_t row = w0 + lane / 4 + 8 * r;
                        row_pos[r] = row < nq ? row_position(pos.q_pos, pos.q_first, row) : w_last;
                    }
                    float s[fwd_keys / 8][4] = {};
                    if (cls == block_mask::partial)
                        mask_tile_scores(c.m, c.causal, pos, nk, s, j0, row_pos, lane);
                    for (int n = 0; n < fwd_keys / 8; ++n)
                        for (int i = 0; i < 4; ++i) {
                            const std::int64_t row = w0 + lane / 4 + 8 * (i / 2);
                            const std::int64_t j = j0 + n * 8 + 2 * (lane % 4) + i % 2;
                            if (s[n][i] == -INFINITY || row >= nq) // rows past q_len: not written
                                continue;
                            EXPECT_LT(j, nk) << "a key past k_len was let through";
                            if (j < nk)
                                ++seen[static_cast<std::size_t>(row * nk + j)];
                        }
                }
            }
        }
    }
    return seen;
}

// attention_bwd_kernel<masked = true>'s loops and decisions (bwd_load_q_tile, bwd_probs).
seen_t replay_bwd(const call& c) {
    const std::int64_t nq = c.nq(), nk = c.nk();
    seen_t seen(static_cast<std::size_t>(nq * nk), 0);
    const attention_positions& pos = c.pos;
    for (std::int64_t j0 = 0; j0 < nk; j0 += bwd_keys) {
        const row_span rows = mask_query_rows<bwd_keys>(c.m, c.causal, pos, nq, nk, j0);
        if (rows.begin >= rows.end)
            continue;
        for (std::int64_t i0 = rows.begin / bwd_rows * bwd_rows; i0 < rows.end; i0 += bwd_rows) {
            std::int64_t qpos[bwd_rows];
            key_range range[bwd_rows];
            for (int col = 0; col < bwd_rows; ++col) {
                const std::int64_t row = i0 + col;
                qpos[col] = row_position(pos.q_pos, pos.q_first, row < nq ? row : nq - 1);
                range[col] = mask_row_range(c.m, c.causal, qpos[col]);
            }
            const bool full_rows = i0 + bwd_rows <= nq;
            for (int warp = 0; warp < bwd_warps; ++warp) {
                const std::int64_t kw0 = j0 + warp * 16;
                const bool live = kw0 < nk;
                const std::int64_t last = std::min(kw0 + 15, nk - 1);
                const std::int64_t first_pos = live ? row_position(pos.k_pos, pos.k_first, kw0) : 0;
                const std::int64_t last_pos = live ? row_position(pos.k_pos, pos.k_first, last) : 0;
                const block_mask cls =
                    live ? mask_tile(c.m, c.causal, qpos[0], qpos[bwd_rows - 1], first_pos,
                                     last_pos, !full_rows || kw0 + 16 > nk)
                         : block_mask::masked;
                if (cls == block_mask::masked)
                    continue;
                const bool partial = cls != block_mask::visible;
                for (int lane = 0; lane < 32; ++lane)
                    for (int n = 0; n < bwd_rows / 8; ++n)
                        for (int i = 0; i < 4; ++i) {
                            const int col = n * 8 + 2 * (lane % 4) + (i & 1);
                            const std::int64_t key = kw0 + lane / 4 + 8 * (i / 2);
                            const bool valid = key < nk;
                            const std::int64_t kp =
                                valid ? row_position(pos.k_pos, pos.k_first, key) : 0;
                            const bool drop =
                                partial &&
                                (!valid || !mask_visible_in(c.m, range[col], qpos[col], kp));
                            const std::int64_t row = i0 + col;
                            if (drop || row >= nq) // rows past q_len: LSE +inf, P = 0
                                continue;
                            EXPECT_TRUE(valid) << "a key past k_len was let through";
                            if (valid)
                                ++seen[static_cast<std::size_t>(row * nk + key)];
                        }
            }
        }
    }
    return seen;
}

// Pairs where `seen` differs from mask_visible (first few reported); the visible count.
std::int64_t check_seen(const call& c, const seen_t& seen, const std::string& what,
                        std::int64_t& visible) {
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < c.nq(); ++i)
        for (std::int64_t j = 0; j < c.nk(); ++j) {
            const int want = mask_visible(c.m, c.causal, c.q[static_cast<std::size_t>(i)],
                                          c.k[static_cast<std::size_t>(j)]);
            visible += want;
            const int got = seen[static_cast<std::size_t>(i * c.nk() + j)];
            if (got != want && bad++ < 3)
                ADD_FAILURE() << what << ": row " << i << " (pos " << c.q[std::size_t(i)]
                              << ") key " << j << " (pos " << c.k[std::size_t(j)] << ") taken "
                              << got << " times, visible " << want;
        }
    return bad;
}

// Replay both kernels over every pair of sides for each mask; returns the visible pairs
// and counts the forward blocks whose key rows start past their call's first key.
template <std::size_t n>
std::int64_t replay_all(const mask_case (&masks)[n], std::int64_t seq, std::int64_t& calls,
                        std::int64_t& skipped_blocks) {
    const std::vector<side> all_sides = sides(seq);
    std::int64_t visible = 0;
    for (const mask_case& mc : masks) {
        const attention_mask mask(spec_of(mc), seq, mc.causal);
        const mask_view m = mask.view();
        for (const side& qs : all_sides)
            for (const side& ks : all_sides)
                for (const bool arrays : {true, false}) {
                    if (!arrays && !(contiguous(qs.pos) && contiguous(ks.pos)))
                        continue;
                    attention_positions pos;
                    pos.q_pos = arrays ? qs.pos.data() : nullptr;
                    pos.k_pos = arrays ? ks.pos.data() : nullptr;
                    pos.q_first = qs.pos.front();
                    pos.k_first = ks.pos.front();
                    const call c{m, mc.causal, qs.pos, ks.pos, pos};
                    const std::string what = std::string(mc.name) + " q " + qs.name + " k " +
                                             ks.name + (arrays ? "" : " (no arrays)");
                    std::int64_t v_fwd = 0, v_bwd = 0;
                    EXPECT_EQ(check_seen(c, replay_fwd(c), what + " fwd", v_fwd), 0);
                    EXPECT_EQ(check_seen(c, replay_bwd(c), what + " bwd", v_bwd), 0);
                    skipped_blocks += mask_key_rows(m, mc.causal, pos, c.nk(), 0, 0).begin > 0;
                    visible += v_fwd;
                    ++calls;
                }
    }
    return visible;
}

} // namespace

TEST(mask_tiles_loops, rows_at_most_is_upper_bound_on_both_paths) {
    const pos_t run = {40, 41, 42, 43, 44, 45, 46};
    const pos_t gaps = {3, 5, 8, 13, 21, 21, 34};
    for (const pos_t* p : {&run, &gaps})
        for (std::int64_t limit = -3; limit < 50; ++limit) {
            const auto want = std::upper_bound(p->begin(), p->end(), limit) - p->begin();
            EXPECT_EQ(rows_at_most(p->data(), 0, 7, limit), want) << limit;
            if (p == &run) {
                EXPECT_EQ(rows_at_most(nullptr, 40, 7, limit), want) << limit;
            }
        }
    EXPECT_EQ(row_position(nullptr, 40, 3), 43);
    EXPECT_EQ(row_position(gaps.data(), 40, 3), 13);
}

TEST(mask_tiles_loops, kernels_let_through_each_visible_pair_once) {
    std::int64_t calls = 0, skipped_blocks = 0;
    const std::int64_t visible = replay_all(k_masks, 420, calls, skipped_blocks);
    // The replay is not vacuous: pairs are visible, and blocks skip some of their keys.
    EXPECT_GT(visible, 0);
    EXPECT_GT(skipped_blocks, 0);
    std::printf("[   info   ] %lld calls, %lld visible pairs\n", static_cast<long long>(calls),
                static_cast<long long>(visible));
}

TEST(mask_tiles_loops, calls_shorter_than_a_tile) {
    std::int64_t calls = 0, skipped_blocks = 0;
    const std::int64_t visible = replay_all(k_tiny_masks, 36, calls, skipped_blocks);
    EXPECT_GT(visible, 0);
    EXPECT_GT(skipped_blocks, 0);
}
