// Sharding a masked sequence (kernels/mask_layout.hpp): zigzag per document and the balanced
// layout partition the sequence into equal sorted shards and even out the visible work.
#include "kernels/mask_count.hpp"
#include "kernels/mask_layout.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace ringscale::kernels;
using shards = std::vector<std::vector<std::int64_t>>;

namespace {

// Every position once, S/P per rank, each shard sorted.
void expect_partition(const shards& s, std::int64_t seq_len) {
    std::vector<std::int64_t> all;
    for (const auto& p : s) {
        EXPECT_EQ(static_cast<std::int64_t>(p.size()),
                  seq_len / static_cast<std::int64_t>(s.size()));
        EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
        all.insert(all.end(), p.begin(), p.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, all_positions(seq_len));
}

double imbalance(const attention_mask& m, const shards& s) {
    const auto all = all_positions(m.seq_len());
    double most = 0, total = 0;
    for (const auto& p : s) {
        const auto n = static_cast<double>(count_visible(m.view(), m.causal(), p, all));
        most = std::max(most, n);
        total += n;
    }
    return most / (total / static_cast<double>(s.size()));
}

} // namespace

TEST(mask_layout, zigzag_per_document_balances_every_document) {
    mask_spec spec;
    spec.docs = "uniform:1K-16K";
    const attention_mask m(spec, 65536, true);
    const shards z = mask_layout_positions(layout::zigzag, 65536, 4, true, &m);
    expect_partition(z, 65536);
    EXPECT_NEAR(imbalance(m, z), 1.0, 1e-12);
    const shards c = mask_layout_positions(layout::contiguous, 65536, 4, true, &m);
    EXPECT_GT(imbalance(m, c), 1.1); // what zigzag per document fixes
    spec.docs = "1001+3095";
    const attention_mask odd(spec, 4096, true);
    EXPECT_THROW(check_mask_layout(layout::zigzag, 4096, 4, &odd), ringscale::config_error);
    EXPECT_NO_THROW(check_mask_layout(layout::contiguous, 4096, 4, &odd));
}

TEST(mask_layout, balanced_evens_block_sparse_and_causal_work) {
    mask_spec spec;
    spec.sparsity = 0.75;
    spec.block = 64;
    for (const bool causal : {false, true}) {
        const attention_mask m(spec, 16384, causal);
        const shards b = mask_layout_positions(layout::balanced, 16384, 4, causal, &m);
        expect_partition(b, 16384);
        EXPECT_LT(imbalance(m, b), 1.02) << causal;
    }
    mask_spec window;
    window.window = 300;
    const attention_mask w(window, 8192, true);
    const shards b = mask_layout_positions(layout::balanced, 8192, 4, true, &w);
    expect_partition(b, 8192);
    EXPECT_LT(imbalance(w, b), 1.05);
    spec.block = 64;
    const attention_mask six(spec, 64 * 6, false); // 6 blocks cannot be dealt to 4 ranks
    EXPECT_THROW(check_mask_layout(layout::balanced, 64 * 6, 4, &six), ringscale::config_error);
}
