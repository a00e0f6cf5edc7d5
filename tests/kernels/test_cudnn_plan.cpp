// Ring steps as cuDNN calls (kernels/cudnn_plan.hpp), no GPU: for every layout, P = 2, 3, 4, 8
// and the masks cuDNN takes, each step's calls are rendered cell by cell with cuDNN's band
// rule and compared with the CPU kernels' own per-step mask (mask_visible on the ranks'
// positions); the alignments TE's ring uses come out where expected; masks cuDNN cannot take
// fall back with their reason.
#include "kernels/cudnn_plan.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_layout.hpp"
#include "kernels/mask_spec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace ringscale::kernels;

namespace {

struct mask_case {
    const char* name;
    bool causal;
    std::int64_t window; // in units of P (scaled per P), 0: none
    bool docs;
};

// The calls rendered: count of calls keeping each cell; every call's rows see a key.
std::vector<int> render(const cudnn_step_plan& plan, std::int64_t nq, std::int64_t nk) {
    std::vector<int> seen(static_cast<std::size_t>(nq * nk), 0);
    for (const cudnn_call& c : plan.calls) {
        EXPECT_GE(c.q0, 0);
        EXPECT_GE(c.k0, 0);
        EXPECT_LE(c.q0 + c.q_len, nq);
        EXPECT_LE(c.k0 + c.k_len, nk);
        for (std::int64_t i = 0; i < c.q_len; ++i) {
            bool any = false;
            for (std::int64_t j = 0; j < c.k_len; ++j)
                if (cudnn_band_keeps(c.band, c.q_len, c.k_len, i, j)) {
                    ++seen[static_cast<std::size_t>((c.q0 + i) * nk + c.k0 + j)];
                    any = true;
                }
            EXPECT_TRUE(any) << "row " << i << " of a call sees no key";
        }
    }
    return seen;
}

// Every step of every rank: the calls keep exactly the visible cells, each once.
void check_ring(layout lay, int ranks, const mask_case& mc) {
    const std::int64_t seq = 96 * ranks;
    mask_spec spec;
    if (mc.window > 0)
        spec.window = mc.window * ranks + 3;
    if (mc.docs)
        spec.docs = "fixed:" + std::to_string(32 * ranks); // divisible by 2P: zigzag per doc
    const attention_mask mask(spec, seq, mc.causal);
    const mask_view view = mask.view();
    const auto pos =
        mask_layout_positions(lay, seq, ranks, mc.causal, spec.any() ? &mask : nullptr);
    for (int r = 0; r < ranks; ++r)
        for (int s = 0; s < ranks; ++s) {
            const auto& q = pos[static_cast<std::size_t>(r)];
            const auto& k = pos[static_cast<std::size_t>(ring_source_rank(r, s, ranks))];
            SCOPED_TRACE(std::string(to_string(lay)) + " P=" + std::to_string(ranks) + " " +
                         mc.name + " rank " + std::to_string(r) + " step " + std::to_string(s));
            const cudnn_step_plan plan = plan_cudnn_step(q, k, mc.causal, view);
            ASSERT_EQ(plan.fallback, "");
            const auto nq = static_cast<std::int64_t>(q.size());
            const auto nk = static_cast<std::int64_t>(k.size());
            const std::vector<int> seen = render(plan, nq, nk);
            std::int64_t wrong = 0;
            for (std::int64_t i = 0; i < nq; ++i)
                for (std::int64_t j = 0; j < nk; ++j) {
                    const int want = mask_visible(view, mc.causal, q[static_cast<std::size_t>(i)],
                                                  k[static_cast<std::size_t>(j)])
                                         ? 1
                                         : 0;
                    wrong += seen[static_cast<std::size_t>(i * nk + j)] != want;
                }
            EXPECT_EQ(wrong, 0);
        }
}

const mask_case cases[] = {{"full", false, 0, false},
                           {"causal", true, 0, false},
                           {"window causal", true, 5, false},
                           {"window", false, 5, false},
                           {"docs causal", true, 0, true},
                           {"docs", false, 0, true},
                           {"docs window causal", true, 3, true}};

} // namespace

TEST(cudnn_plan, every_layout_step_matches_the_cpu_mask_cell_by_cell) {
    for (const layout lay : {layout::contiguous, layout::zigzag, layout::striped, layout::balanced})
        for (const int ranks : {2, 3, 4, 8})
            for (const mask_case& mc : cases)
                check_ring(lay, ranks, mc);
}

// Zigzag under causal is TE's DualChunkSwap: the diagonal step is one causal call, an earlier
// block one unmasked call of every query against its first half, a later block one unmasked
// call of the second half of the queries against all of it.
TEST(cudnn_plan, zigzag_causal_runs_three_step_shapes) {
    const int ranks = 4;
    const auto pos = mask_layout_positions(layout::zigzag, 64, ranks, true, nullptr);
    const std::int64_t n = 16;
    for (int r = 0; r < ranks; ++r)
        for (int s = 0; s < ranks; ++s) {
            const int src = ring_source_rank(r, s, ranks);
            const auto plan = plan_cudnn_step(pos[static_cast<std::size_t>(r)],
                                              pos[static_cast<std::size_t>(src)], true, {});
            ASSERT_EQ(plan.calls.size(), 1u);
            const cudnn_call& c = plan.calls[0];
            if (src == r) {
                EXPECT_EQ(c.band, (cudnn_band{cudnn_align::top_left, 0, 0}));
                EXPECT_EQ(c.q_len, n);
                EXPECT_EQ(c.k_len, n);
            } else if (src < r) {
                EXPECT_TRUE(cudnn_band_full(c.band));
                EXPECT_EQ(c.q0, 0);
                EXPECT_EQ(c.q_len, n);
                EXPECT_EQ(c.k0, 0);
                EXPECT_EQ(c.k_len, n / 2);
            } else {
                EXPECT_TRUE(cudnn_band_full(c.band));
                EXPECT_EQ(c.q0, n / 2);
                EXPECT_EQ(c.q_len, n / 2);
                EXPECT_EQ(c.k_len, n);
            }
        }
}

// Contiguous causal: the diagonal, then full blocks, then nothing; a window's band.
TEST(cudnn_plan, contiguous_alignments_and_window_bounds) {
    const std::vector<std::int64_t> a{0, 1, 2, 3, 4, 5, 6, 7}, b{8, 9, 10, 11, 12, 13, 14, 15};
    EXPECT_EQ(plan_cudnn_step(a, a, true, {}).calls.at(0).band,
              (cudnn_band{cudnn_align::top_left, 0, 0}));
    EXPECT_TRUE(cudnn_band_full(plan_cudnn_step(b, a, true, {}).calls.at(0).band));
    EXPECT_TRUE(plan_cudnn_step(a, b, true, {}).calls.empty());
    EXPECT_TRUE(plan_cudnn_step(a, b, true, {}).fallback.empty());
    // Queries 4..7 against keys 0..7, causal: the diagonal at the bottom-right corner.
    const std::vector<std::int64_t> late{4, 5, 6, 7};
    EXPECT_EQ(plan_cudnn_step(late, a, true, {}).calls.at(0).band,
              (cudnn_band{cudnn_align::bottom_right, 0, 0}));
    // Window 3, causal, diagonal step: left bound 3, right 0.
    mask_view w;
    w.window = 3;
    EXPECT_EQ(plan_cudnn_step(a, a, true, w).calls.at(0).band,
              (cudnn_band{cudnn_align::top_left, 3, 0}));
    // Window 3, not causal: |q - k| < 3, left bound 3 and right bound 2.
    EXPECT_EQ(plan_cudnn_step(a, a, false, w).calls.at(0).band,
              (cudnn_band{cudnn_align::top_left, 3, 2}));
    // Window 3 causal, the previous block: only queries 8, 9 see keys 6, 7 (a tight box).
    const auto prev = plan_cudnn_step(b, a, true, w);
    ASSERT_EQ(prev.calls.size(), 1u);
    EXPECT_EQ(prev.calls[0].q0, 0);
    EXPECT_EQ(prev.calls[0].q_len, 2);
    EXPECT_EQ(prev.calls[0].k0, 6);
    EXPECT_EQ(prev.calls[0].k_len, 2);
}

TEST(cudnn_plan, masks_cudnn_cannot_take_fall_back_with_the_reason) {
    const std::vector<std::int64_t> a{0, 1, 2, 3, 4, 5, 6, 7};
    mask_spec sparse;
    sparse.sparsity = 0.5;
    sparse.block = 2;
    const attention_mask ms(sparse, 8, true);
    auto plan = plan_cudnn_step(a, a, true, ms.view());
    EXPECT_TRUE(plan.calls.empty());
    EXPECT_NE(plan.fallback.find("block-sparse"), std::string::npos) << plan.fallback;
    EXPECT_EQ(cudnn_mask_problem(ms.view()), plan.fallback);
    mask_spec dilated;
    dilated.dilation = "4:2";
    const attention_mask md(dilated, 8, true);
    plan = plan_cudnn_step(a, a, true, md.view());
    EXPECT_NE(plan.fallback.find("dilated"), std::string::npos) << plan.fallback;
    // Documents of two tokens, non-causal: not one band; one call per document, over a cap.
    mask_spec docs;
    docs.docs = "fixed:2";
    const attention_mask mdoc(docs, 8, false);
    plan = plan_cudnn_step(a, a, false, mdoc.view(), 2);
    EXPECT_TRUE(plan.calls.empty());
    EXPECT_NE(plan.fallback.find("more than 2"), std::string::npos) << plan.fallback;
    EXPECT_EQ(plan_cudnn_step(a, a, false, mdoc.view(), 4).calls.size(), 4u);
    EXPECT_EQ(cudnn_mask_problem(mdoc.view()), "");
}

// cuDNN's band rule itself, on a 3 x 5 call.
TEST(cudnn_plan, band_rule_matches_cudnn_semantics) {
    const cudnn_band tl_causal{cudnn_align::top_left, 0, 0};
    const cudnn_band br_causal{cudnn_align::bottom_right, 0, 0};
    const cudnn_band window{cudnn_align::top_left, 2, 1};
    EXPECT_TRUE(cudnn_band_keeps(tl_causal, 3, 5, 1, 1));
    EXPECT_FALSE(cudnn_band_keeps(tl_causal, 3, 5, 1, 2));
    EXPECT_TRUE(cudnn_band_keeps(br_causal, 3, 5, 0, 2)); // the diagonal starts at column 2
    EXPECT_FALSE(cudnn_band_keeps(br_causal, 3, 5, 0, 3));
    EXPECT_TRUE(cudnn_band_keeps(br_causal, 3, 5, 2, 4));
    EXPECT_FALSE(cudnn_band_keeps(window, 3, 5, 2, 0)); // j > i - 2 fails
    EXPECT_TRUE(cudnn_band_keeps(window, 3, 5, 2, 1));
    EXPECT_TRUE(cudnn_band_keeps(window, 3, 5, 2, 3)); // j <= i + 1
    EXPECT_FALSE(cudnn_band_keeps(window, 3, 5, 2, 4));
    EXPECT_STREQ(to_string(cudnn_align::bottom_right), "bottom_right");
}
