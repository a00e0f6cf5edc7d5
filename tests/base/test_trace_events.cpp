// The --trace event recorder: bounded buffer, completion, sequence numbers, pairing of sends
// with receives, the stored columns and their checks, phases named by the context.
#include "src/base/trace_events.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace ringscale::trace;

namespace {

event transfer(kind k, int rank, int peer, int tag, int seq, int iteration = 3) {
    event e;
    e.what = k;
    e.rank = rank;
    e.peer = peer;
    e.tag = tag;
    e.seq = seq;
    e.iteration = iteration;
    e.start_s = 0;
    e.end_s = 1;
    return e;
}

} // namespace

TEST(TraceRecorder, KeepsEventsOnlyInsideAnIterationAndWithinItsBound) {
    recorder r(3);
    event e;
    EXPECT_EQ(r.add(e), recorder::npos); // before any iteration
    r.begin_iteration(5, 100.0);
    EXPECT_EQ(r.add(e), 0u);
    EXPECT_EQ(r.add(e), 1u);
    r.end_iteration();
    EXPECT_EQ(r.add(e), recorder::npos);
    r.begin_iteration(6, 200.0);
    EXPECT_EQ(r.add(e), 2u);
    EXPECT_EQ(r.add(e), recorder::npos); // full
    EXPECT_EQ(r.dropped(), 1u);
    ASSERT_EQ(r.events().size(), 3u);
    EXPECT_EQ(r.events()[0].iteration, 5);
    EXPECT_EQ(r.events()[2].iteration, 6);
    EXPECT_DOUBLE_EQ(r.iteration_start_s(6), 200.0);
    EXPECT_TRUE(std::isnan(r.iteration_start_s(7)));
}

TEST(TraceRecorder, CompletesATransferOnceAndCountsSequencesPerPeerTagAndDirection) {
    recorder r(10);
    r.begin_iteration(0, 0.0);
    event e;
    e.start_s = 1;
    e.end_s = -1; // posted
    const std::size_t i = r.add(e);
    r.complete(i, 2.0);
    r.complete(i, 9.0); // a later test of a done request changes nothing
    EXPECT_DOUBLE_EQ(r.events()[i].end_s, 2.0);
    EXPECT_EQ(r.next_seq(1, 7, true), 0);
    EXPECT_EQ(r.next_seq(1, 7, true), 1);
    EXPECT_EQ(r.next_seq(1, 7, false), 0);
    EXPECT_EQ(r.next_seq(2, 7, true), 0);
    EXPECT_EQ(r.next_seq(1, 8, true), 0);
    r.begin_iteration(1, 5.0); // a new iteration counts from 0 again
    EXPECT_EQ(r.next_seq(1, 7, true), 0);
}

TEST(TracePairing, EverySendMatchedToItsReceiveOnceAndNoneTwice) {
    std::vector<event> ev;
    // A ring of 3 ranks, two steps: rank r sends to r+1 with tag 1, seq 0 and 1.
    for (int seq = 0; seq < 2; ++seq)
        for (int r = 0; r < 3; ++r) {
            ev.push_back(transfer(kind::send, r, (r + 1) % 3, 1, seq));
            ev.push_back(transfer(kind::recv, (r + 1) % 3, r, 1, seq));
        }
    ev.push_back(transfer(kind::recv, 1, 0, 1, 0));    // a second receive of one send
    ev.push_back(transfer(kind::send, 0, 2, 9, 0));    // no receive with its tag
    ev.push_back(transfer(kind::recv, 2, 0, 1, 0, 4)); // another iteration's
    const auto pairs = pair_transfers(ev);
    ASSERT_EQ(pairs.size(), 6u);
    std::set<std::size_t> sends, recvs;
    for (const auto& [s, r] : pairs) {
        EXPECT_TRUE(sends.insert(s).second) << "send matched twice";
        EXPECT_TRUE(recvs.insert(r).second) << "receive matched twice";
        EXPECT_EQ(ev[s].what, kind::send);
        EXPECT_EQ(ev[r].what, kind::recv);
        EXPECT_EQ(ev[s].peer, ev[r].rank);
        EXPECT_EQ(ev[r].peer, ev[s].rank);
        EXPECT_EQ(ev[s].tag, ev[r].tag);
        EXPECT_EQ(ev[s].seq, ev[r].seq);
        EXPECT_EQ(ev[s].iteration, ev[r].iteration);
    }
}

TEST(TraceColumns, RoundTripAndRefuseWhatCannotBeBelieved) {
    std::vector<event> ev = {transfer(kind::send, 1, 0, 1, 0), transfer(kind::wait, 0, -1, -1, -1)};
    ev[1].op = kind::recv;
    ev[1].bytes = 64;
    const auto cols = to_columns(ev);
    EXPECT_EQ(cols.size(), column_names().size());
    const auto back = from_columns(cols);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].what, kind::send);
    EXPECT_EQ(back[1].op, kind::recv);
    EXPECT_DOUBLE_EQ(back[1].bytes, 64);
    auto bad = cols;
    bad["kind"][0] = 42; // not a kind
    EXPECT_THROW(from_columns(bad), std::invalid_argument);
    bad = cols;
    bad["end_s"][0] = -5; // ends before it starts
    EXPECT_THROW(from_columns(bad), std::invalid_argument);
    bad = cols;
    bad["rank"].pop_back(); // lengths differ
    EXPECT_THROW(from_columns(bad), std::invalid_argument);
    bad = cols;
    bad.erase("seq");
    EXPECT_THROW(from_columns(bad), std::invalid_argument);
    bad = cols;
    bad["step"][0] = std::nan("");
    EXPECT_THROW(from_columns(bad), std::invalid_argument);
}

TEST(TracePhases, RecordComputeAndWaitsNamedByTheContextOnlyWhileActive) {
    phase_begin(); // not tracing: nothing
    phase_end(false);
    recorder r(16);
    {
        const activation on(&r);
        r.begin_iteration(0, 0.0);
        context c = current();
        c.step = 2;
        c.flops = 1e6;
        const scope at_step(c);
        phase_begin();
        phase_end(false);
        const scope waiting(wait_context(kind::all_gather, 128));
        phase_begin();
        phase_end(true);
        // What a GPU's executor labels its spans with: the same event, without times.
        const event label = phase_event(true);
        EXPECT_EQ(label.what, kind::wait);
        EXPECT_EQ(label.op, kind::all_gather);
        EXPECT_EQ(label.step, 2);
        EXPECT_DOUBLE_EQ(label.bytes, 128);
        EXPECT_EQ(phase_event(false).what, kind::compute);
        EXPECT_DOUBLE_EQ(phase_event(false).flops, 1e6);
    }
    EXPECT_EQ(active(), nullptr);
    EXPECT_EQ(current().step, -1); // the scopes restored the context
    ASSERT_EQ(r.events().size(), 2u);
    EXPECT_EQ(r.events()[0].what, kind::compute);
    EXPECT_EQ(r.events()[0].step, 2);
    EXPECT_DOUBLE_EQ(r.events()[0].flops, 1e6);
    EXPECT_EQ(r.events()[1].what, kind::wait);
    EXPECT_EQ(r.events()[1].op, kind::all_gather);
    EXPECT_DOUBLE_EQ(r.events()[1].bytes, 128);
    EXPECT_LE(r.events()[0].start_s, r.events()[0].end_s);
    EXPECT_LE(r.events()[0].end_s, r.events()[1].start_s);
}
