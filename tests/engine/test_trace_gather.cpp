// --trace after the iterations: which ones are kept, every rank's events moved onto its own
// iteration time base (the barrier that started the iteration), and the skew that remains.
#include "src/engine/trace_gather.hpp"

#include <gtest/gtest.h>

using namespace ringscale;

namespace {

// 2 warm-up rows and 5 timed rows on 2 ranks; the slowest rank's times 3, 1, 5, 2, 4.
results::case_record record() {
    results::case_record rec;
    rec.world = 2;
    rec.rows = 7;
    rec.is_warmup = {1, 1, 0, 0, 0, 0, 0};
    rec.time_s = {9, 9, 9, 9, 3, 2, 1, 0.5, 5, 1, 2, 2, 1, 4}; // rows 2..6: 3, 1, 5, 2, 4
    return rec;
}

} // namespace

TEST(TraceKept, TheMedianAndTheSlowestTimedIterations) {
    const auto one = kept_iterations(record(), 1);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0], std::make_pair(2, 0)); // the median of 3, 1, 5, 2, 4: 3, row 2
    const auto two = kept_iterations(record(), 2);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[0], std::make_pair(2, 0));
    EXPECT_EQ(two[1], std::make_pair(4, 1)); // the slowest: 5, row 4 (the warm-up's 9 not)
    results::case_record one_row = record();
    one_row.rows = 3;
    one_row.time_s.resize(6);
    one_row.is_warmup.resize(3);
    EXPECT_EQ(kept_iterations(one_row, 2).size(), 1u); // the slowest is the median
}

TEST(TraceAlignment, EachRanksEventsOnItsOwnIterationStart) {
    // Two ranks whose clocks (now_s) differ by 1000 s: after rebasing, the same moment of the
    // iteration reads the same on both.
    trace::recorder r0(16), r1(16);
    r0.begin_iteration(4, 10.0);
    r1.begin_iteration(4, 1010.0);
    trace::event send;
    send.what = trace::kind::send;
    send.peer = 1;
    send.tag = 1;
    send.seq = 0;
    send.start_s = 10.002;
    send.end_s = 10.005;
    r0.add(send);
    trace::event recv = send;
    recv.what = trace::kind::recv;
    recv.peer = 0;
    recv.start_s = 1010.001;
    recv.end_s = -1; // never seen complete: ends at the last point the rank saw
    r1.add(recv);
    trace::event compute;
    compute.start_s = 1010.001;
    compute.end_s = 1010.006;
    r1.add(compute);
    auto a = rebased(r0, {4}, 0);
    const auto b = rebased(r1, {4}, 1);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_NEAR(a[0].start_s, 0.002, 1e-9);
    EXPECT_EQ(a[0].rank, 0);
    EXPECT_NEAR(b[0].start_s, 0.001, 1e-9);
    EXPECT_NEAR(b[0].end_s, 0.006, 1e-9);
    EXPECT_EQ(b[0].rank, 1);
    a.insert(a.end(), b.begin(), b.end());
    EXPECT_DOUBLE_EQ(alignment_skew_s(a, 4), 0.0); // the receive ended after its send began
    a[1].end_s = 0.0015; // a receive seen complete 0.5 ms before its send was posted
    EXPECT_NEAR(alignment_skew_s(a, 4), 0.0005, 1e-12);
    EXPECT_DOUBLE_EQ(alignment_skew_s(a, 3), 0.0); // another iteration
    EXPECT_TRUE(rebased(r0, {5}, 0).empty());      // an iteration not recorded
}
