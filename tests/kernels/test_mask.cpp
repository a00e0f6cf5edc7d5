// The mask description (kernels/mask_spec.hpp), its predicates and tile classification
// (kernels/mask.hpp) and the exact pair counts (kernels/mask_count.hpp), each against a
// brute-force definition written here from the rules' text.
#include "kernels/mask.hpp"
#include "kernels/mask_count.hpp"
#include "kernels/mask_spec.hpp"
#include "kernels/random.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>
#include <vector>

using namespace ringscale::kernels;
using ringscale::config_error;
using pos_t = std::vector<std::int64_t>;

namespace {

// The rules, one pair at a time, from the spec alone (the block pattern from the mask's
// own keep array: its fractions are tested separately).
struct brute_mask {
    const attention_mask& mask;
    std::vector<std::int64_t> doc_of;

    explicit brute_mask(const attention_mask& m) : mask(m) {
        doc_of.assign(static_cast<std::size_t>(m.seq_len()), 0);
        if (!m.spec().docs.empty()) {
            std::int64_t p = 0, d = 0;
            for (const std::int64_t len : doc_lengths(m.spec().docs, m.seq_len())) {
                for (std::int64_t i = 0; i < len; ++i)
                    doc_of[static_cast<std::size_t>(p++)] = d;
                ++d;
            }
        }
    }

    bool visible(std::int64_t q, std::int64_t k) const {
        const mask_spec& s = mask.spec();
        if (mask.causal() && k > q)
            return false;
        if (s.window > 0 && (mask.causal() ? q - k >= s.window : std::llabs(q - k) >= s.window))
            return false;
        if (doc_of[static_cast<std::size_t>(q)] != doc_of[static_cast<std::size_t>(k)])
            return false;
        if (s.sparsity >= 0) {
            const std::int64_t n = (mask.seq_len() + s.block - 1) / s.block;
            if (!mask.keep()[static_cast<std::size_t>(q / s.block * n + k / s.block)])
                return false;
        }
        if (s.dilation.empty())
            return true;
        for (const dilation_pattern& d : parse_dilation(s.dilation))
            if (q / d.segment == k / d.segment && (q % d.segment) % d.rate == 0 &&
                (k % d.segment) % d.rate == 0)
                return true;
        return false;
    }

    std::int64_t count(const pos_t& q, const pos_t& k) const {
        std::int64_t n = 0;
        for (const std::int64_t i : q)
            for (const std::int64_t j : k)
                n += visible(i, j);
        return n;
    }
};

// A sorted random subset of [0, n) (about half), seeded.
pos_t subset(std::int64_t n, std::uint64_t seed) {
    pos_t out;
    for (std::int64_t i = 0; i < n; ++i)
        if (mix64(seed ^ mix64(static_cast<std::uint64_t>(i))) & 1)
            out.push_back(i);
    return out;
}

std::vector<mask_spec> sample_specs() {
    std::vector<mask_spec> out(8);
    out[0].window = 7;
    out[1].docs = "13+40+3+40";
    out[2].docs = "fixed:24";
    out[3].sparsity = 0.5;
    out[3].block = 8;
    out[4].sparsity = 0.75;
    out[4].block = 16;
    out[4].pattern = "local_global";
    out[5].dilation = "32:4+16:2";
    out[6].window = 20;
    out[6].docs = "uniform:8-32";
    out[7].window = 30;
    out[7].sparsity = 0.3;
    out[7].block = 8;
    out[7].dilation = "96:1";
    return out;
}

} // namespace

TEST(mask_spec, documents_fixed_uniform_and_explicit) {
    EXPECT_EQ(doc_lengths("fixed:3K", 8192), (pos_t{3072, 3072, 2048}));
    EXPECT_EQ(doc_lengths("1K+3K", 4096), (pos_t{1024, 3072}));
    const pos_t u = doc_lengths("uniform:1K-16K", 65536);
    EXPECT_EQ(std::accumulate(u.begin(), u.end(), std::int64_t{0}), 65536);
    for (std::size_t i = 0; i + 1 < u.size(); ++i) {
        EXPECT_GE(u[i], 1024);
        EXPECT_LE(u[i], 16384);
        EXPECT_EQ(u[i] % 1024, 0);
    }
    EXPECT_EQ(u, doc_lengths("uniform:1K-16K", 65536)); // seeded by the spec alone
    EXPECT_GT(std::set<std::int64_t>(u.begin(), u.end()).size(), 2u);
}

TEST(mask_spec, bad_input_is_one_config_error) {
    EXPECT_THROW(doc_lengths("fixed:5K", 4096), config_error); // longer than the sequence
    EXPECT_THROW(doc_lengths("1K+2K", 4096), config_error);    // does not sum to it
    EXPECT_THROW(doc_lengths("1K++3K", 4096), config_error);   // malformed
    EXPECT_THROW(doc_lengths("uniform:4K-1K", 8192), config_error);
    EXPECT_THROW(parse_dilation("100:3"), config_error); // rate does not divide segment
    EXPECT_THROW(parse_dilation("100"), config_error);
    EXPECT_THROW(parse_dilation("8:1+8:2+8:4+8:8+16:2"), config_error); // too many
    mask_spec s;
    s.sparsity = 1.0;
    EXPECT_THROW(check_mask_spec(s, 1024), config_error);
    s.sparsity = 0.5;
    s.pattern = "nosuch";
    EXPECT_THROW(check_mask_spec(s, 1024), config_error);
    s.pattern = "random";
    s.block = 1;
    EXPECT_THROW(check_mask_spec(s, std::int64_t{1} << 20), config_error); // 2^40 block pairs
    s.block = 256; // 4096 x 4096 block pairs
    EXPECT_NO_THROW(check_mask_spec(s, std::int64_t{1} << 20));
}

// The documents and the planner's arrays are bounded before anything is allocated
// (unbounded, fixed:1 on 1G tokens spins for a minute and grows past 1.3 GB).
TEST(mask_spec, documents_are_bounded_before_they_are_made) {
    EXPECT_EQ(doc_count_bound("fixed:3K", 8192), 3);
    EXPECT_EQ(doc_count_bound("uniform:1K-16K", 65536), 64);
    EXPECT_EQ(doc_count_bound("1K+3K", 4096), 2);
    EXPECT_EQ(doc_count_bound("fixed:1", std::int64_t{1} << 30), std::int64_t{1} << 30);
    EXPECT_EQ(doc_lengths("fixed:1", max_docs).size(), static_cast<std::size_t>(max_docs));
    try {
        doc_lengths("fixed:1", std::int64_t{1} << 30);
        ADD_FAILURE() << "a billion documents were made";
    } catch (const config_error& e) {
        EXPECT_STREQ(e.what(), "--docs: 'fixed:1' cuts 1073741824 tokens into up to 1073741824 "
                               "documents; at most 4194304 (2^22)");
    }
    EXPECT_THROW(doc_lengths("uniform:1-2", std::int64_t{1} << 28), config_error);
    mask_spec window;
    window.window = 512;
    EXPECT_EQ(mask_plan_bytes(window, 1024), 3u * 1024 * 8);
    EXPECT_EQ(mask_plan_bytes(window, std::int64_t{1} << 30), 24ull << 30);
    mask_spec docs;
    docs.docs = "fixed:1";
    EXPECT_THROW(mask_plan_bytes(docs, std::int64_t{1} << 30), config_error);
    docs.docs = "fixed:1K";
    EXPECT_EQ(mask_plan_bytes(docs, 4096), 3u * 4096 * 8 + 2u * 5 * 8);
}

TEST(mask_spec, block_patterns_mask_the_fraction_asked) {
    for (const bool causal : {false, true})
        for (const double f : {0.0, 0.5, 0.75, 0.9}) {
            mask_spec s;
            s.sparsity = f;
            s.block = 64;
            const attention_mask random(s, 64 * 200, causal);
            EXPECT_NEAR(random.block_sparsity(), f, 0.02) << f << " causal " << causal;
            s.pattern = "local_global";
            const attention_mask lg(s, 64 * 200, causal);
            // The band grows in whole diagonals: at most one band's worth below F.
            EXPECT_LE(lg.block_sparsity(), f + 1e-12);
            EXPECT_GE(lg.block_sparsity(), f - 0.02);
            EXPECT_EQ(lg.keep()[0], 1); // the global first block
        }
    mask_spec s;
    s.sparsity = 0.5;
    EXPECT_EQ(mask_spec{}.label(), "-");
    EXPECT_EQ(s.label(), "sparse=0.5");
}

TEST(mask, predicates_follow_the_rules) {
    mask_view none;
    EXPECT_FALSE(mask_active(none));
    EXPECT_TRUE(mask_visible(none, true, 5, 5));
    EXPECT_FALSE(mask_visible(none, true, 5, 6));
    mask_view w;
    w.window = 3; // causal: q - 2 .. q
    EXPECT_TRUE(mask_visible(w, true, 10, 8));
    EXPECT_FALSE(mask_visible(w, true, 10, 7));
    EXPECT_TRUE(mask_visible(w, false, 10, 12));
    EXPECT_FALSE(mask_visible(w, false, 10, 13));
    const std::int64_t starts[] = {0, 4, 10};
    mask_view d;
    d.docs = 2;
    d.doc_start = starts;
    EXPECT_EQ(mask_doc_of(d, 3), 0);
    EXPECT_EQ(mask_doc_of(d, 4), 1);
    EXPECT_FALSE(mask_visible(d, false, 4, 3));
    EXPECT_TRUE(mask_visible(d, false, 4, 9));
    const key_range r = mask_row_range(d, true, 6);
    EXPECT_EQ(r.lo, 4);
    EXPECT_EQ(r.hi, 6);
}

// Counts, any_visible and the tile classification against the brute force.
TEST(mask, counts_and_tiles_match_brute_force) {
    const std::int64_t n = 96;
    for (const bool causal : {false, true})
        for (const mask_spec& spec : sample_specs()) {
            const attention_mask mask(spec, n, causal);
            const brute_mask brute(mask);
            const mask_view v = mask.view();
            const pos_t all = all_positions(n);
            EXPECT_EQ(count_visible(v, causal, all, all), brute.count(all, all)) << spec.label();
            for (std::uint64_t seed = 1; seed < 6; ++seed) {
                const pos_t q = subset(n, seed), k = subset(n, seed + 100);
                const std::int64_t want = brute.count(q, k);
                EXPECT_EQ(count_visible(v, causal, q, k), want) << spec.label() << " " << seed;
                EXPECT_EQ(any_visible(v, causal, q, k), want > 0);
            }
            // Every box of positions: masked and visible are exact.
            for (std::int64_t qa = 0; qa < n; qa += 5)
                for (std::int64_t ka = 0; ka < n; ka += 7) {
                    const std::int64_t qb = std::min(n - 1, qa + 11), kb = std::min(n - 1, ka + 9);
                    pos_t q(static_cast<std::size_t>(qb - qa + 1)),
                        k(static_cast<std::size_t>(kb - ka + 1));
                    std::iota(q.begin(), q.end(), qa);
                    std::iota(k.begin(), k.end(), ka);
                    const std::int64_t c = brute.count(q, k);
                    const block_mask m = mask_classify(v, causal, qa, qb, ka, kb);
                    if (m == block_mask::masked) {
                        EXPECT_EQ(c, 0) << spec.label();
                    }
                    if (m == block_mask::visible) {
                        EXPECT_EQ(c, static_cast<std::int64_t>(q.size() * k.size()));
                    }
                }
        }
}

TEST(mask, a_dense_view_counts_the_causal_triangle) {
    const pos_t all = all_positions(100);
    EXPECT_EQ(count_visible(mask_view{}, true, all, all), 100 * 101 / 2);
    EXPECT_EQ(count_visible(mask_view{}, false, all, all), 100 * 100);
    EXPECT_EQ(count_visible(mask_view{}, true, pos_t{}, all), 0);
}
