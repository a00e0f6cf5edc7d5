// The data-parallel strategies' pure rules (jobs/schemes/data_parallel.hpp): DDP buckets in
// backward order, every unit in exactly one, and shard padding.
#include "jobs/schemes/data_parallel.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::jobs::schemes;

TEST(train_buckets, reverse_unit_order_contiguous_and_complete) {
    kernels::model::model_config c;
    c.layers = 4;
    c.hidden = 128;
    c.heads = 2;
    c.vocab = 64;
    const kernels::model::param_layout l(c);
    const double block_bytes = l.block().size * 4.0;
    const auto b = make_buckets(l, 2 * block_bytes); // head + 2 blocks reach the size
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(b.front().last_unit, l.head_unit());
    std::size_t end = l.total();
    int next_last = l.head_unit();
    for (const auto& k : b) {
        EXPECT_EQ(k.last_unit, next_last);
        EXPECT_EQ(k.offset + k.size, end); // contiguous, descending
        EXPECT_EQ(k.offset, l.unit(k.first_unit).offset);
        end = k.offset;
        next_last = k.first_unit - 1;
    }
    EXPECT_EQ(end, 0u);
    EXPECT_EQ(b.back().first_unit, 0);
    EXPECT_EQ(b.front().first_unit, l.head_unit() - 2); // head + 2 blocks
    EXPECT_EQ(make_buckets(l, 1.0).size(), static_cast<std::size_t>(l.units()));
    EXPECT_EQ(make_buckets(l, 1e12).size(), 1u);
    EXPECT_EQ(padded(10, 4), 12u);
    EXPECT_EQ(padded(12, 4), 12u);
}

// ZeRO-1's buckets: bounds at multiples of P, together the padded gradient, each
// complete when its first unit is (its start at or past that unit's offset), and the shard
// offsets in flat order, so P pieces of every bucket make up the whole.
TEST(train_buckets, zero1_buckets_split_evenly_and_cover_the_padded_gradient) {
    kernels::model::model_config c;
    c.layers = 3;
    c.hidden = 96;
    c.heads = 2;
    c.vocab = 37; // odd sizes: unit offsets that are not multiples of P
    const kernels::model::param_layout l(c);
    for (const int p : {1, 2, 3, 4, 7}) {
        SCOPED_TRACE("P=" + std::to_string(p));
        for (const double bytes : {1.0, 4.0 * l.block().size, 1e12}) {
            const auto b = make_shard_buckets(l, bytes, p);
            ASSERT_FALSE(b.empty());
            std::size_t end = padded(l.total(), p), shard = end / p;
            for (const auto& k : b) {
                EXPECT_EQ(k.start % p, 0u);
                EXPECT_EQ(k.size % p, 0u);
                EXPECT_GT(k.size, 0u);
                EXPECT_EQ(k.start + k.size, end); // contiguous, descending
                EXPECT_GE(k.start, l.unit(k.first_unit).offset);
                shard -= k.size / p;
                EXPECT_EQ(k.shard_offset, shard); // ascending with start
                end = k.start;
            }
            EXPECT_EQ(end, 0u);
            EXPECT_EQ(shard, 0u);
            EXPECT_EQ(b.back().first_unit, 0);
        }
        EXPECT_EQ(make_shard_buckets(l, 1e12, p).size(), 1u);
    }
}
