// The device event recorder's host side on fake timestamps: spans to the profile and the
// trace (one recorder, two consumers), the time base, the bounded pool's overflow count, one
// read per iteration, and the timeline checks the GPU test applies to real events.
#include "kernels/event_recorder.hpp"
#include "kernels/op_profile.hpp"

#include <gtest/gtest.h>
#include <map>
#include <stdexcept>

using namespace ringscale;
using namespace ringscale::kernels;

namespace {

// Each record stamps the slot with `now` (the test moves it); reading a slot never recorded
// since the last read throws, as cudaEventElapsedTime fails on an event never recorded.
class fake_clock final : public event_clock {
  public:
    void record(std::size_t slot, void* stream) override {
        m_at[slot] = now;
        streams[slot] = stream;
        ++records;
    }
    std::vector<double> elapsed_s(std::size_t n) override {
        ++reads;
        std::vector<double> t(n);
        for (std::size_t i = 0; i < n; ++i) {
            const auto it = m_at.find(i);
            if (it == m_at.end())
                throw std::logic_error("slot read but never recorded");
            t[i] = it->second - m_at.at(0);
        }
        m_at.clear();
        return t;
    }
    double now = 0;
    int records = 0, reads = 0;
    std::map<std::size_t, void*> streams;

  private:
    std::map<std::size_t, double> m_at;
};

span_label op(op_kind k) {
    span_label l;
    l.op = static_cast<int>(k);
    return l;
}

span_label traced(trace::kind k, int layer) {
    span_label l;
    l.traced = true;
    l.event.what = k;
    l.event.layer = layer;
    return l;
}

// A span on `stream` from `from` to `to` on the fake clock.
void span_at(event_recorder& r, fake_clock& c, double from, double to, const span_label& l,
             void* stream = nullptr) {
    c.now = from;
    const std::size_t t = r.open(stream);
    c.now = to;
    r.close(t, l);
}

} // namespace

TEST(event_recorder, records_nothing_without_a_consumer) {
    fake_clock c;
    event_recorder r(c, 64);
    r.begin_iteration(5.0, nullptr);
    EXPECT_FALSE(r.active());
    EXPECT_EQ(r.open(), event_recorder::npos);
    r.close(event_recorder::npos, op(op_kind::qkv_fwd));
    const resolved_iteration it = r.resolve();
    EXPECT_EQ(c.records, 0);
    EXPECT_EQ(c.reads, 0);
    EXPECT_TRUE(it.spans.empty());
}

TEST(event_recorder, gives_each_operation_its_seconds_and_the_step_its_span_in_one_read) {
    fake_clock c;
    event_recorder r(c, 64);
    op_profile p;
    c.now = 10.0; // the start event
    r.begin_iteration(100.0, nullptr);
    r.attach(&p);
    span_at(r, c, 10.5, 10.75, op(op_kind::qkv_fwd));
    span_at(r, c, 11.0, 12.0, op(op_kind::attention_fwd));
    span_at(r, c, 12.0, 12.125, op(op_kind::qkv_fwd));
    span_at(r, c, 12.5, 12.5, op(op_kind::communication)); // an empty wait counts as a call
    EXPECT_EQ(p.calls(op_kind::qkv_fwd), 0); // nothing until the iteration is resolved
    c.now = 13.0;                            // the end event
    const resolved_iteration it = r.resolve();
    EXPECT_EQ(c.reads, 1);
    EXPECT_DOUBLE_EQ(p.seconds(op_kind::qkv_fwd), 0.375);
    EXPECT_EQ(p.calls(op_kind::qkv_fwd), 2);
    EXPECT_DOUBLE_EQ(p.seconds(op_kind::attention_fwd), 1.0);
    EXPECT_EQ(p.calls(op_kind::communication), 1);
    EXPECT_DOUBLE_EQ(p.seconds(op_kind::communication), 0.0);
    EXPECT_EQ(p.steps(), 1);
    EXPECT_DOUBLE_EQ(p.step_s(), 3.0);
    ASSERT_EQ(it.spans.size(), 4u);
    EXPECT_DOUBLE_EQ(it.spans[1].start_s, 1.0);
    EXPECT_EQ(timeline_fault(it), "");
}

TEST(event_recorder, puts_trace_events_on_the_host_base_of_the_iteration) {
    fake_clock c;
    event_recorder r(c, 64);
    trace::recorder t(100);
    t.begin_iteration(7, 250.0);
    c.now = 3.0;
    r.begin_iteration(250.0, &t);
    EXPECT_TRUE(r.tracing());
    EXPECT_FALSE(r.profiling());
    int comm_stream = 0;
    span_at(r, c, 3.5, 4.0, traced(trace::kind::forward, 1));
    span_at(r, c, 3.25, 3.75, traced(trace::kind::send, -1), &comm_stream);
    span_at(r, c, 4.0, 4.5, op(op_kind::gelu_fwd)); // the profile's only: not in the trace
    c.now = 5.0;
    const resolved_iteration it = r.resolve();
    ASSERT_EQ(t.events().size(), 2u);
    EXPECT_EQ(t.events()[0].what, trace::kind::forward);
    EXPECT_DOUBLE_EQ(t.events()[0].start_s, 250.5);
    EXPECT_DOUBLE_EQ(t.events()[0].end_s, 251.0);
    EXPECT_EQ(t.events()[0].layer, 1);
    EXPECT_EQ(t.events()[0].iteration, 7);
    EXPECT_EQ(t.events()[1].what, trace::kind::send);
    EXPECT_DOUBLE_EQ(t.events()[1].start_s, 250.25);
    ASSERT_EQ(it.spans.size(), 3u);
    EXPECT_EQ(it.spans[0].stream, 0);
    EXPECT_EQ(it.spans[1].stream, 1); // the communicator's stream, numbered after compute
    EXPECT_EQ(c.streams.at(3), &comm_stream);
    EXPECT_EQ(c.streams.at(7), nullptr); // the end event (slot 7), on the compute stream
    EXPECT_EQ(timeline_fault(it), "");
    // Both consumers of one iteration from the same spans.
    op_profile p;
    deliver(it, 250.0, &p, nullptr);
    EXPECT_DOUBLE_EQ(p.seconds(op_kind::gelu_fwd), 0.5);
    EXPECT_DOUBLE_EQ(p.total_s(), 0.5); // the trace's spans name no operation
    EXPECT_DOUBLE_EQ(p.step_s(), 2.0);
}

TEST(event_recorder, a_full_pool_drops_whole_spans_and_counts_them_for_the_trace) {
    fake_clock c;
    // 8 events: the start, the end kept back, three spans of two; the fourth and fifth drop.
    event_recorder r(c, 8);
    trace::recorder t(100);
    op_profile p;
    t.begin_iteration(0, 0.0);
    r.begin_iteration(0.0, &t);
    r.attach(&p);
    for (int i = 0; i < 5; ++i) {
        span_label l = traced(trace::kind::compute, i);
        l.op = static_cast<int>(op_kind::mlp_up_fwd);
        span_at(r, c, i, i + 0.5, l);
    }
    EXPECT_EQ(r.dropped(), 2u);
    c.now = 10;
    const resolved_iteration it = r.resolve();
    EXPECT_EQ(it.dropped, 2u);
    EXPECT_EQ(it.spans.size(), 3u);
    EXPECT_EQ(p.calls(op_kind::mlp_up_fwd), 3);
    EXPECT_EQ(p.dropped(), 2u);
    EXPECT_EQ(t.events().size(), 3u);
    EXPECT_EQ(t.dropped(), 2u);
    EXPECT_LE(c.streams.size(), 8u); // never a slot beyond the pool
    // The next iteration starts with the whole pool again; the count over its life stays.
    c.now = 20;
    t.begin_iteration(1, 20.0);
    r.begin_iteration(20.0, &t);
    span_at(r, c, 21, 22, traced(trace::kind::compute, 0));
    c.now = 23;
    EXPECT_EQ(r.resolve().dropped, 0u);
    EXPECT_EQ(r.dropped(), 2u);
    EXPECT_EQ(t.events().size(), 4u);
    EXPECT_DOUBLE_EQ(t.events().back().start_s, 21.0);
}

TEST(event_recorder, resolving_detaches_the_consumers_and_drops_spans_never_closed) {
    fake_clock c;
    event_recorder r(c, 64);
    op_profile p;
    r.begin_iteration(0.0, nullptr);
    r.attach(&p);
    span_at(r, c, 1, 2, op(op_kind::optimizer));
    c.now = 2.5;
    const std::size_t open = r.open(); // its end event is recorded at resolution, never read
    EXPECT_NE(open, event_recorder::npos);
    c.now = 3;
    EXPECT_EQ(r.resolve().spans.size(), 1u); // the fake clock throws on a slot never recorded
    EXPECT_FALSE(r.active());
    EXPECT_EQ(r.open(), event_recorder::npos);
    r.close(open, op(op_kind::optimizer)); // a token of the last iteration: nothing
    EXPECT_TRUE(r.resolve().spans.empty());
    EXPECT_EQ(p.calls(op_kind::optimizer), 1);
    EXPECT_EQ(p.steps(), 1);
    EXPECT_EQ(c.reads, 1);
}

TEST(event_recorder, a_new_iteration_discards_what_the_last_left_unresolved) {
    fake_clock c;
    event_recorder r(c, 64);
    trace::recorder t(100);
    t.begin_iteration(0, 0.0);
    r.begin_iteration(0.0, &t);
    span_at(r, c, 1, 2, traced(trace::kind::compute, 0));
    c.now = 10;
    t.begin_iteration(1, 10.0);
    r.begin_iteration(10.0, &t); // no resolve in between: the first iteration's span is gone
    span_at(r, c, 11, 13, traced(trace::kind::merge, 0));
    c.now = 14;
    const resolved_iteration it = r.resolve();
    ASSERT_EQ(it.spans.size(), 1u);
    EXPECT_DOUBLE_EQ(it.spans[0].start_s, 1.0); // from the second start event
    EXPECT_DOUBLE_EQ(it.span_s, 4.0);
    ASSERT_EQ(t.events().size(), 1u);
    EXPECT_EQ(t.events()[0].what, trace::kind::merge);
    EXPECT_DOUBLE_EQ(t.events()[0].start_s, 11.0);
}

TEST(event_recorder, profile_scopes_become_spans_of_the_device_recorder) {
    fake_clock c;
    event_recorder r(c, 64);
    op_profile p;
    p.set_device(&r);
    r.begin_iteration(0.0, nullptr);
    r.attach(&p);
    c.now = 1;
    {
        const op_profile::scope outer(&p, op_kind::attention_fwd);
        c.now = 2;
        const op_profile::scope inner(&p, op_kind::layout_fwd);
        c.now = 4;
    }
    EXPECT_EQ(p.calls(op_kind::attention_fwd), 0); // no host clock read: waits for resolution
    c.now = 8;
    const resolved_iteration it = r.resolve();
    EXPECT_DOUBLE_EQ(p.seconds(op_kind::attention_fwd), 3.0);
    EXPECT_DOUBLE_EQ(p.seconds(op_kind::layout_fwd), 2.0);
    EXPECT_EQ(timeline_fault(it), "");
}

TEST(event_recorder, labels_an_executor_phase_for_whichever_consumer_is_attached) {
    fake_clock c;
    event_recorder r(c, 64);
    op_profile p;
    r.begin_iteration(0.0, nullptr);
    EXPECT_EQ(phase_label(r, true).op, -1); // no consumer: a span for nothing
    EXPECT_FALSE(phase_label(r, true).traced);
    r.attach(&p);
    EXPECT_EQ(phase_label(r, true).op, static_cast<int>(op_kind::communication));
    EXPECT_EQ(phase_label(r, false).op, -1); // compute phases: the operations time themselves
    EXPECT_FALSE(phase_label(r, true).traced);
    r.resolve();
    trace::recorder t(10);
    t.begin_iteration(0, 0.0);
    const trace::activation on(&t);
    trace::context step = trace::current();
    step.step = 3;
    const trace::scope at_step(step);
    const trace::scope waiting(trace::wait_context(trace::kind::recv, 64));
    r.begin_iteration(0.0, &t);
    const span_label wait = phase_label(r, true);
    EXPECT_EQ(wait.op, -1); // tracing only
    EXPECT_TRUE(wait.traced);
    EXPECT_EQ(wait.event.what, trace::kind::wait);
    EXPECT_EQ(wait.event.op, trace::kind::recv);
    EXPECT_EQ(wait.event.step, 3);
    EXPECT_EQ(phase_label(r, false).event.what, trace::kind::compute);
}

TEST(timeline_fault, names_spans_out_of_order_overlapping_or_backwards) {
    resolved_iteration it;
    it.span_s = 10;
    auto at = [](double a, double b, int stream) {
        resolved_span s;
        s.start_s = a;
        s.end_s = b;
        s.stream = stream;
        return s;
    };
    it.spans = {at(0, 5, 0), at(1, 2, 0), at(2, 4, 0), at(5, 5, 0), at(0.5, 9, 1)};
    EXPECT_EQ(timeline_fault(it), ""); // nested, touching, an empty span, another stream
    it.spans = {at(0, 5, 0), at(4, 6, 0)};
    EXPECT_NE(timeline_fault(it).find("without nesting"), std::string::npos);
    it.spans = {at(2, 3, 0), at(1, 2, 0)};
    EXPECT_NE(timeline_fault(it).find("before the span opened"), std::string::npos);
    it.spans = {at(0, 5, 0), at(1, 2, 1), at(0.5, 3, 1)};
    EXPECT_NE(timeline_fault(it).find("stream 1"), std::string::npos);
    it.spans = {at(3, 2, 0)};
    EXPECT_NE(timeline_fault(it).find("backwards"), std::string::npos);
    it.spans = {at(3, 11, 0)};
    EXPECT_NE(timeline_fault(it).find("outside"), std::string::npos);
}
