// The accuracy arithmetic (kernels/accuracy.hpp): normwise errors from exact values, merging
// in any split, -inf references, and the stratified sample.
#include "kernels/accuracy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace ringscale::kernels;

TEST(accuracy, normwise_errors_from_exact_values) {
    error_tally t;
    t.add(1.5, 2.0);   // e 0.5
    t.add(-4.0, -4.0); // e 0
    t.add(0.0, 0.5);   // e 0.5
    t.add(1.0, 1.0);   // e 0
    EXPECT_EQ(t.max_rel(), 0.5 / 4.0);
    EXPECT_EQ(t.rms_rel(), std::sqrt(0.5 / 4) / 4.0); // sqrt((0.25 + 0.25) / 4) / 4
    EXPECT_LE(t.rms_rel(), t.max_rel());
    error_tally a, b;
    a.add(1.5, 2.0);
    a.add(-4.0, -4.0);
    b.add(0.0, 0.5);
    b.add(1.0, 1.0);
    a.merge(b);
    EXPECT_EQ(a.max_rel(), t.max_rel());
    EXPECT_EQ(a.rms_rel(), t.rms_rel());
    EXPECT_TRUE(std::isnan(error_tally{}.max_rel()));
}

TEST(accuracy, minus_infinity_references_and_non_finite_results) {
    error_tally t;
    t.add(-INFINITY, -INFINITY); // a row with no visible key, matched: not counted
    EXPECT_EQ(t.count, 0);
    t.add(2.0, 2.0);
    EXPECT_EQ(t.max_rel(), 0.0);
    t.add(NAN, 1.0);
    EXPECT_TRUE(std::isinf(t.max_rel()));
    error_tally u;
    u.add(1.0, -INFINITY); // a value where the reference has none
    u.add(1.0, 1.0);
    EXPECT_TRUE(std::isinf(u.max_rel()));
}

TEST(accuracy, the_sample_covers_every_stratum_once) {
    const auto all = sample_rows(10, 10, 1, 2);
    ASSERT_EQ(all.size(), 10u);
    EXPECT_EQ(all.front(), 0);
    EXPECT_EQ(all.back(), 9);
    const auto s = sample_rows(1000000, 64, 7, 3);
    ASSERT_EQ(s.size(), 64u);
    for (std::size_t i = 0; i < s.size(); ++i) {
        EXPECT_GE(s[i], static_cast<std::int64_t>(i) * 1000000 / 64);
        EXPECT_LT(s[i], static_cast<std::int64_t>(i + 1) * 1000000 / 64);
    }
    EXPECT_EQ(s, sample_rows(1000000, 64, 7, 3)); // seeded
    EXPECT_NE(s, sample_rows(1000000, 64, 8, 3));
    EXPECT_NE(s, sample_rows(1000000, 64, 7, 4));
}
