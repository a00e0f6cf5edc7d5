// The overlap summary on hand-built timelines (full overlap, none, partial, a straggler), the
// Chrome trace-event JSON against the format's rules, and the report's timeline SVG.
#include "analysis/measures/overlap.hpp"
#include "analysis/presentation/timeline_svg.hpp"
#include "analysis/presentation/trace_json.hpp"

#include "analysis/presentation/table.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace ringscale;
using namespace ringscale::analysis;
using trace::kind;

namespace {

trace::event ev(kind k, int rank, int step, double start, double end, int peer = -1, int tag = -1,
                int seq = -1) {
    trace::event e;
    e.what = k;
    e.rank = rank;
    e.step = step;
    e.start_s = start;
    e.end_s = end;
    e.peer = peer;
    e.tag = tag;
    e.seq = seq;
    e.iteration = 0;
    e.bytes = peer >= 0 ? 1024 : 0;
    if (k == kind::wait)
        e.op = kind::recv;
    return e;
}

const step_overlap& at(const overlap_summary& s, int rank, int step) {
    for (const step_overlap& o : s.steps)
        if (o.rank == rank && o.step == step)
            return o;
    throw std::runtime_error("no such step");
}

} // namespace

TEST(Overlap, UnionAndIntersectionOfSpans) {
    EXPECT_DOUBLE_EQ(union_length({{0, 2}, {1, 3}, {5, 6}}), 4.0);
    EXPECT_DOUBLE_EQ(union_length({}), 0.0);
    EXPECT_DOUBLE_EQ(intersection_length({{0, 4}}, {{1, 2}, {3, 6}}), 2.0);
    EXPECT_DOUBLE_EQ(intersection_length({{0, 1}}, {{2, 3}}), 0.0);
}

TEST(Overlap, ATransferUnderComputeIsFullyHidden) {
    const auto s =
        summarize_overlap({ev(kind::compute, 0, 0, 0, 10), ev(kind::send, 0, 0, 1, 5, 1, 1, 0),
                           ev(kind::recv, 0, 0, 1, 5, 1, 1, 0)});
    const step_overlap& o = at(s, 0, 0);
    EXPECT_DOUBLE_EQ(o.transfer_s, 4.0);
    EXPECT_DOUBLE_EQ(o.overlapped_s, 4.0);
    EXPECT_DOUBLE_EQ(o.exposed_s, 0.0);
    EXPECT_DOUBLE_EQ(o.compute_s, 10.0);
}

TEST(Overlap, ATransferAfterComputeIsFullyExposed) {
    const auto s =
        summarize_overlap({ev(kind::compute, 0, 0, 0, 2), ev(kind::recv, 0, 0, 3, 6, 1, 1, 0),
                           ev(kind::wait, 0, 0, 3, 6)});
    const step_overlap& o = at(s, 0, 0);
    EXPECT_DOUBLE_EQ(o.transfer_s, 3.0);
    EXPECT_DOUBLE_EQ(o.overlapped_s, 0.0);
    EXPECT_DOUBLE_EQ(o.exposed_s, 3.0);
    EXPECT_DOUBLE_EQ(o.wait_s, 3.0);
    ASSERT_NE(s.worst(), nullptr);
    EXPECT_EQ(worst_step_text(s), "rank 0 step 0: 3000.00 ms of 3000.00 ms transfer exposed "
                                  "(100%)");
}

TEST(Overlap, ATransferOutlastingComputeIsPartlyExposed) {
    const auto s =
        summarize_overlap({ev(kind::compute, 0, 1, 0, 4), ev(kind::recv, 0, 1, 2, 6, 1, 1, 0),
                           ev(kind::wait, 0, 1, 4, 6), ev(kind::compute, 1, 1, 0, 1),
                           ev(kind::send, 1, 1, 2, 6, 0, 1, 0)});
    const step_overlap& o = at(s, 0, 1);
    EXPECT_DOUBLE_EQ(o.overlapped_s, 2.0);
    EXPECT_DOUBLE_EQ(o.exposed_s, 2.0);
    EXPECT_DOUBLE_EQ(at(s, 1, 1).exposed_s, 4.0); // rank 1 computed nothing meanwhile
    EXPECT_EQ(s.worst()->rank, 1);
    // Rank 0 finished last, waiting for a send posted in time: the link set the length.
    EXPECT_EQ(s.last_rank, 0);
    ASSERT_EQ(s.path.size(), 1u);
    EXPECT_EQ(s.path[0].cause, "transfer");
}

TEST(Overlap, AStragglersLateSendSetsTheIterationsLength) {
    // Rank 1 computes 10 s before it sends; rank 2 posted its receive at 0.5 and waits.
    const auto s =
        summarize_overlap({ev(kind::compute, 0, 0, 0, 3), ev(kind::compute, 1, 0, 0, 10),
                           ev(kind::send, 1, 0, 10, 11, 2, 1, 0), ev(kind::compute, 2, 0, 0.5, 2),
                           ev(kind::recv, 2, 0, 0.5, 11, 1, 1, 0), ev(kind::wait, 2, 0, 2, 11),
                           ev(kind::compute, 2, 1, 11, 12)});
    EXPECT_DOUBLE_EQ(s.length_s, 12.0);
    EXPECT_EQ(s.last_rank, 2);
    ASSERT_EQ(s.path.size(), 2u);
    EXPECT_EQ(s.path[0].rank, 2);
    EXPECT_EQ(s.path[0].cause, "sender");
    EXPECT_EQ(s.path[1].rank, 1); // the straggler
    EXPECT_EQ(s.path[1].cause, "compute");
    EXPECT_DOUBLE_EQ(at(s, 2, 0).exposed_s, 9.0);
    EXPECT_EQ(critical_path_text(s),
              "rank 2 step 0 (waited for a late sender) <- rank 1 step 0 (compute)");
    EXPECT_EQ(lane_order(s, 3), (std::vector<int>{1, 2, 0}));
}

namespace {

const std::string hostile = "</script><img src=x onerror=alert(1)>\"\\\x07 '";

traced_iteration ring_iteration(int ranks) {
    traced_iteration it;
    for (int r = 0; r < ranks; ++r) {
        const int next = (r + 1) % ranks, prev = (r + ranks - 1) % ranks;
        for (int s = 0; s < 2; ++s) {
            const double t = s * 0.004;
            it.events.push_back(ev(kind::compute, r, s, t + 0.0005, t + 0.003));
            it.events.push_back(ev(kind::send, r, s, t + 0.0004, t + 0.002, next, 1, s));
            it.events.push_back(ev(kind::recv, r, s, t + 0.0004, t + 0.0035, prev, 1, s));
            it.events.push_back(ev(kind::wait, r, s, t + 0.003, t + 0.0035));
        }
        // Two sends of one tag that cross: they cannot share a thread.
        it.events.push_back(ev(kind::send, r, 2, 0.010, 0.012, next, 2, 0));
        it.events.push_back(ev(kind::send, r, 2, 0.011, 0.013, next, 2, 1));
        it.rank_host.push_back(r / 2);
    }
    return it;
}

} // namespace

TEST(TraceJson, FollowsTheTraceEventFormat) {
    const traced_iteration it = ring_iteration(3);
    const std::string text = json_text(chrome_trace({{hostile, &it}}), -1);
    EXPECT_EQ(text.find('\x07'), std::string::npos); // escaped, never raw
    const nlohmann::json doc = nlohmann::json::parse(text);
    ASSERT_TRUE(doc.contains("traceEvents"));
    std::map<int, std::string> processes;
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> threads;
    int flows_s = 0, flows_f = 0;
    for (const auto& e : doc["traceEvents"]) {
        ASSERT_TRUE(e.contains("ph") && e.contains("pid"));
        const std::string ph = e["ph"];
        if (ph == "M" && e["name"] == "process_name")
            processes[e["pid"].get<int>()] = e["args"]["name"];
        if (ph == "X") {
            for (const char* field : {"name", "ts", "dur", "tid", "cat", "args"})
                ASSERT_TRUE(e.contains(field)) << field;
            EXPECT_EQ(e["args"]["case"], hostile); // the label as text, whatever it holds
            const double ts = e["ts"], dur = e["dur"];
            EXPECT_GE(dur, 0);
            threads[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(ts, ts + dur);
        }
        flows_s += ph == "s";
        flows_f += ph == "f";
    }
    EXPECT_EQ(processes,
              (std::map<int, std::string>{
                  {0, "rank 0 (host 0)"}, {1, "rank 1 (host 0)"}, {2, "rank 2 (host 1)"}}));
    // A flow per matched transfer: 3 ranks x 2 steps of tag 1 (tag 2's sends have no receive).
    EXPECT_EQ(flows_s, 6);
    EXPECT_EQ(flows_f, 6);
    bool first_compute_in_us = false;
    for (const auto& [thread, spans] : threads) {
        for (std::size_t i = 1; i < spans.size(); ++i)
            EXPECT_LE(spans[i - 1].first, spans[i].first) << "not monotonic on a thread";
        for (std::size_t i = 0; i < spans.size(); ++i)
            for (std::size_t j = i + 1; j < spans.size(); ++j) {
                const auto& a = spans[i];
                const auto& b = spans[j];
                const bool apart = a.second <= b.first || b.second <= a.first;
                const bool nested = (a.first <= b.first && b.second <= a.second) ||
                                    (b.first <= a.first && a.second <= b.second);
                EXPECT_TRUE(apart || nested) << "events cross on one thread";
            }
        for (const auto& sp : spans)
            first_compute_in_us |= std::abs(sp.first - 500.0) < 1e-6; // 0.0005 s
    }
    EXPECT_TRUE(first_compute_in_us) << "ts is not in microseconds";
}

TEST(TraceJson, AReceiveIsNeverDrawnBeforeItsSend) {
    traced_iteration it;
    it.events = {ev(kind::send, 0, 0, 0.002, 0.003, 1, 1, 0),
                 ev(kind::recv, 1, 0, 0.0, 0.001, 0, 1, 0)};
    const nlohmann::json doc = chrome_trace({{"c", &it}});
    int recvs = 0;
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] != "X" || e["cat"] != "recv")
            continue;
        ++recvs;
        EXPECT_GE(e["ts"].get<double>() + e["dur"].get<double>(), 2000.0 - 1e-9);
    }
    EXPECT_EQ(recvs, 1);
}

TEST(TimelineSvg, ALanePerRankAtMostSixteenWithHoverTextEscaped) {
    const traced_iteration it = ring_iteration(20);
    const std::string svg = timeline_svg(it, hostile, "tl0");
    std::size_t lanes = 0;
    for (auto at = svg.find("class=\"lane\""); at != std::string::npos;
         at = svg.find("class=\"lane\"", at + 1))
        ++lanes;
    EXPECT_EQ(lanes, timeline_max_lanes);
    EXPECT_NE(svg.find("16 of 20 ranks"), std::string::npos);
    EXPECT_EQ(svg.find("<img"), std::string::npos);
    EXPECT_EQ(svg.find("<script"), std::string::npos);
    EXPECT_NE(svg.find("&lt;img"), std::string::npos);
    EXPECT_NE(svg.find("<title>send: rank 0, ring step 0, to rank 1"), std::string::npos);
    EXPECT_NE(svg.find("url(#tl0-hatch)"), std::string::npos); // waits hatched
}
