#include "analysis/statistics/rank_tests.hpp"

#include <gtest/gtest.h>

using namespace ringscale::analysis;

TEST(stats_rank_tests, midranks_average_ties) {
    double ties = 0;
    const auto r = midranks({3, 1, 3, 2}, &ties);
    EXPECT_EQ(r, (std::vector<double>{3.5, 1, 3.5, 2}));
    EXPECT_DOUBLE_EQ(ties, 6.0); // one pair: 2^3 - 2
}

TEST(stats_rank_tests, exact_test_fully_separated) {
    const auto r = mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
    EXPECT_TRUE(r.exact);
    EXPECT_DOUBLE_EQ(r.u_x, 0.0);
    EXPECT_NEAR(r.p_value, 2.0 / 252.0, 1e-15); // 2 / C(10, 5)
    EXPECT_DOUBLE_EQ(r.cliffs_delta, -1.0);
}

TEST(stats_rank_tests, exact_test_interleaved) {
    // U distribution for m = n = 3 (20 orderings): counts 1,1,2,3,3,3,3,2,1,1 for U = 0..9.
    // U_x = 3 (3>2, 5>2, 5>4): P(U <= 3) = 7/20, P(U >= 3) = 16/20, p = 2 * 7/20.
    const auto r = mann_whitney({1, 3, 5}, {2, 4, 6});
    EXPECT_TRUE(r.exact);
    EXPECT_DOUBLE_EQ(r.u_x, 3.0);
    EXPECT_NEAR(r.p_value, 0.7, 1e-15);
    EXPECT_NEAR(mann_whitney_exact_p(9, 3, 3), 0.1, 1e-15);
}

TEST(stats_rank_tests, normal_approximation_with_ties) {
    // Reference (Python, stdlib only): U = R_x - m(m+1)/2 = 10.5; tie term sum(t^3 - t) = 54;
    // var = mn/12 ((N+1) - 54/(N(N-1))); z = (|U - mn/2| - 0.5)/sd, signed; p = erfc(|z|/sqrt2).
    const auto r = mann_whitney({1, 2, 2, 3, 4, 5}, {2, 3, 3, 4, 6, 7, 8});
    EXPECT_FALSE(r.exact); // ties force the normal approximation
    EXPECT_DOUBLE_EQ(r.u_x, 10.5);
    EXPECT_NEAR(r.z, -1.4465667395567865, 1e-12);
    EXPECT_NEAR(r.p_value, 0.14801830727232684, 1e-12);
    EXPECT_DOUBLE_EQ(r.cliffs_delta, -0.5);
}

TEST(stats_rank_tests, degenerate_inputs) {
    EXPECT_DOUBLE_EQ(mann_whitney({}, {1, 2}).p_value, 1.0);
    EXPECT_DOUBLE_EQ(mann_whitney({1, 1, 1}, {1, 1, 1}, 0).p_value, 1.0);
}

TEST(stats_rank_tests, holm_adjustment) {
    // sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> max(0.04, 0.06)
    const auto adj = holm_adjust({0.01, 0.04, 0.03, 0.005});
    ASSERT_EQ(adj.size(), 4u);
    EXPECT_NEAR(adj[0], 0.03, 1e-15);
    EXPECT_NEAR(adj[1], 0.06, 1e-15);
    EXPECT_NEAR(adj[2], 0.06, 1e-15);
    EXPECT_NEAR(adj[3], 0.02, 1e-15);
    EXPECT_DOUBLE_EQ(holm_adjust({0.6, 0.7})[0], 1.0);
}

TEST(stats_rank_tests, cliffs_delta_labels) {
    EXPECT_EQ(cliffs_delta_label(0.1), "negligible");
    EXPECT_EQ(cliffs_delta_label(-0.2), "small");
    EXPECT_EQ(cliffs_delta_label(0.4), "medium");
    EXPECT_EQ(cliffs_delta_label(-0.9), "large");
}
