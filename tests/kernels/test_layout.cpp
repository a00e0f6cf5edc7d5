#include "kernels/layout.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

using namespace ringscale::kernels;
using pos_t = std::vector<std::int64_t>;

namespace {
const layout k_all[] = {layout::contiguous, layout::zigzag, layout::striped};
}

TEST(layout, parse_and_name_round_trip) {
    for (const layout l : k_all)
        EXPECT_EQ(parse_layout(to_string(l)), l);
    EXPECT_THROW(parse_layout("ring"), ringscale::config_error);
    EXPECT_THROW(parse_layout("Zigzag"), ringscale::config_error);
}

TEST(layout, rejects_indivisible_sequence_lengths) {
    EXPECT_NO_THROW(check_layout(layout::contiguous, 12, 4));
    EXPECT_THROW(check_layout(layout::contiguous, 10, 4), ringscale::config_error);
    EXPECT_THROW(check_layout(layout::striped, 10, 4), ringscale::config_error);
    EXPECT_NO_THROW(check_layout(layout::zigzag, 16, 4));
    EXPECT_THROW(check_layout(layout::zigzag, 12, 4), ringscale::config_error); // needs 2P
    EXPECT_THROW(check_layout(layout::contiguous, 8, 0), ringscale::config_error);
    EXPECT_THROW(layout_positions(layout::contiguous, 8, 2, 2), ringscale::config_error);
    try {
        check_layout(layout::zigzag, 12, 4);
    } catch (const ringscale::config_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("divisible by 8"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << "one line";
    }
}

TEST(layout, positions_of_each_layout_on_two_ranks) {
    EXPECT_EQ(layout_positions(layout::contiguous, 8, 2, 0), (pos_t{0, 1, 2, 3}));
    EXPECT_EQ(layout_positions(layout::contiguous, 8, 2, 1), (pos_t{4, 5, 6, 7}));
    EXPECT_EQ(layout_positions(layout::zigzag, 8, 2, 0), (pos_t{0, 1, 6, 7}));
    EXPECT_EQ(layout_positions(layout::zigzag, 8, 2, 1), (pos_t{2, 3, 4, 5}));
    EXPECT_EQ(layout_positions(layout::striped, 8, 2, 0), (pos_t{0, 2, 4, 6}));
    EXPECT_EQ(layout_positions(layout::striped, 8, 2, 1), (pos_t{1, 3, 5, 7}));
}

TEST(layout, every_token_owned_exactly_once_and_sorted) {
    for (const layout l : k_all)
        for (const int ranks : {1, 2, 3, 4, 8}) {
            const std::int64_t seq = 2 * ranks * 6;
            std::vector<int> owners(static_cast<std::size_t>(seq), 0);
            for (int r = 0; r < ranks; ++r) {
                const pos_t pos = layout_positions(l, seq, ranks, r);
                EXPECT_EQ(static_cast<std::int64_t>(pos.size()), seq / ranks);
                EXPECT_TRUE(std::is_sorted(pos.begin(), pos.end()));
                for (const std::int64_t p : pos)
                    ++owners.at(static_cast<std::size_t>(p));
            }
            EXPECT_TRUE(std::all_of(owners.begin(), owners.end(), [](int c) { return c == 1; }))
                << to_string(l) << " P=" << ranks;
        }
}

TEST(layout, zigzag_balances_causal_work_and_contiguous_does_not) {
    const int ranks = 4;
    const std::int64_t seq = 64;
    pos_t all(seq);
    std::iota(all.begin(), all.end(), 0);
    std::vector<std::int64_t> zig, contig;
    for (int r = 0; r < ranks; ++r) {
        zig.push_back(visible_pairs(layout_positions(layout::zigzag, seq, ranks, r), all, true));
        contig.push_back(
            visible_pairs(layout_positions(layout::contiguous, seq, ranks, r), all, true));
    }
    for (int r = 1; r < ranks; ++r)
        EXPECT_EQ(zig[r], zig[0]) << "rank " << r;
    EXPECT_EQ(std::accumulate(zig.begin(), zig.end(), std::int64_t{0}), seq * (seq + 1) / 2);
    EXPECT_GT(contig[ranks - 1], 4 * contig[0]); // the last rank does far more
}

TEST(layout, scatter_then_gather_restores_the_tensor) {
    const std::int64_t outer = 3, dim = 5;
    for (const layout l : k_all)
        for (int r = 0; r < 3; ++r) {
            const std::int64_t s = 18; // divisible by 2P = 6
            std::vector<float> g(outer * s * dim), out(g.size(), -1.0f);
            std::iota(g.begin(), g.end(), 0.0f);
            const pos_t pos = layout_positions(l, s, 3, r);
            std::vector<float> local(outer * pos.size() * dim);
            scatter_rows(g.data(), outer, s, dim, pos, local.data());
            // Row i of head o on this rank is global row pos[i] of head o.
            EXPECT_EQ(local[(1 * pos.size() + 2) * dim + 4], g[(1 * s + pos[2]) * dim + 4]);
            gather_rows(local.data(), outer, s, dim, pos, out.data());
            for (std::int64_t o = 0; o < outer; ++o)
                for (const std::int64_t p : pos)
                    for (std::int64_t d = 0; d < dim; ++d)
                        ASSERT_EQ(out[(o * s + p) * dim + d], g[(o * s + p) * dim + d]);
        }
}

TEST(layout, ring_schedule_visits_every_source_once) {
    for (const int ranks : {1, 2, 3, 5}) {
        for (int r = 0; r < ranks; ++r) {
            std::vector<int> seen(static_cast<std::size_t>(ranks), 0);
            for (int step = 0; step < ranks; ++step)
                ++seen.at(static_cast<std::size_t>(ring_source_rank(r, step, ranks)));
            EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
            EXPECT_EQ(ring_source_rank(r, 0, ranks), r);
            EXPECT_EQ(ring_prev(ring_next(r, ranks), ranks), r);
            // What r holds at step s+1 is what its previous rank held at step s.
            for (int step = 0; step + 1 < ranks; ++step)
                EXPECT_EQ(ring_source_rank(r, step + 1, ranks),
                          ring_source_rank(ring_prev(r, ranks), step, ranks));
        }
    }
    EXPECT_EQ(ring_source_rank(0, 1, 4), 3);
    EXPECT_EQ(ring_source_rank(2, 3, 4), 3);
}

TEST(layout, classify_block_by_positions) {
    const pos_t q{4, 5, 6, 7};
    const pos_t early{0, 1, 2, 3}, late{8, 9}, overlap{3, 5, 9};
    EXPECT_EQ(classify_block(q.data(), 4, early.data(), 4, true), block_mask::visible);
    EXPECT_EQ(classify_block(q.data(), 4, late.data(), 2, true), block_mask::masked);
    EXPECT_EQ(classify_block(q.data(), 4, overlap.data(), 3, true), block_mask::partial);
    EXPECT_EQ(classify_block(q.data(), 4, q.data(), 4, true), block_mask::partial); // diagonal
    EXPECT_EQ(classify_block(q.data(), 4, late.data(), 2, false), block_mask::visible);
    EXPECT_EQ(classify_block(q.data(), 0, late.data(), 2, false), block_mask::masked);
    EXPECT_EQ(visible_pairs(q, overlap, true), 1 + 2 + 2 + 2);
    EXPECT_EQ(visible_pairs(q, overlap, false), 12);
}
