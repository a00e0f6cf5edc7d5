#include "jobs/schemes/device_exchange.hpp"

#include "src/base/trace_events.hpp"

namespace ringscale::jobs::schemes {

namespace {

// --trace: a request that marks its events complete when it is first seen done (a test that
// returns true, or the end of wait). The CPU sees completion only when it looks, between
// kernel pieces: a transfer's end is when the rank learned of it.
class traced_request final : public comm::request {
  public:
    traced_request(comm::request_ptr inner, std::vector<std::size_t> events)
        : m_inner(std::move(inner)), m_events(std::move(events)) {}
    void wait() override {
        m_inner->wait();
        done();
    }
    bool test() override {
        const bool ok = m_inner->test();
        if (ok)
            done();
        return ok;
    }

  private:
    void done() {
        if (trace::recorder* r = trace::active())
            for (std::size_t e : m_events)
                r->complete(e, now_s());
        m_events.clear();
    }
    comm::request_ptr m_inner;
    std::vector<std::size_t> m_events;
};

// A transfer event of `k` with `peer`, `tag` (its sequence number taken) and `bytes`, no times.
trace::event transfer(trace::recorder& r, trace::kind k, int peer, int tag, double bytes) {
    trace::event e;
    e.what = k;
    e.step = trace::current().step;
    e.layer = trace::current().layer;
    e.peer = peer;
    e.tag = tag;
    if (peer >= 0)
        e.seq = r.next_seq(peer, tag, k == trace::kind::send);
    e.bytes = bytes;
    return e;
}

// One transfer event posted now (end unset until its completion is seen).
std::size_t posted(trace::recorder& r, trace::kind k, int peer, int tag, double bytes) {
    trace::event e = transfer(r, k, peer, tag, bytes);
    e.start_s = now_s();
    e.end_s = -1;
    return r.add(e);
}

// isendrecv on a stream-ordered `c` while the device traces: the send and the receive as
// spans on c's stream around the call (closed innermost first, so they nest).
comm::request_ptr sendrecv_on_stream(comm::communicator& c, kernels::event_recorder& on_stream,
                                     const void* send, void* recv, std::size_t bytes, int dest,
                                     int source, int tag) {
    const std::size_t send_span = on_stream.open(c.stream());
    const std::size_t recv_span = on_stream.open(c.stream());
    comm::request_ptr req =
        c.isendrecv(send, bytes, dest, recv, bytes, source, comm::dtype::u8, tag);
    if (trace::recorder* r = trace::active()) {
        const double b = static_cast<double>(bytes);
        kernels::span_label what;
        what.traced = true;
        what.event = transfer(*r, trace::kind::recv, source, tag, b);
        on_stream.close(recv_span, what);
        what.event = transfer(*r, trace::kind::send, dest, tag, b);
        on_stream.close(send_span, what);
    }
    return req;
}

} // namespace

kernels::event_recorder* stream_tracer(comm::communicator& c, kernels::executor& dev) {
    kernels::event_recorder* r = dev.events();
    return c.stream_ordered() && r && r->tracing() ? r : nullptr;
}

comm::request_ptr traced(comm::request_ptr req, trace::kind k, double bytes) {
    trace::recorder* r = trace::active();
    if (!r || !req)
        return req;
    return std::make_unique<traced_request>(std::move(req),
                                            std::vector<std::size_t>{posted(*r, k, -1, -1, bytes)});
}

void order_comm_after(comm::communicator& c, kernels::executor& dev, const kernels::mark& m) {
    if (c.stream_ordered())
        dev.stream_wait(c.stream(), m);
    else
        dev.host_wait(m);
}

void wait_exposed(comm::request_ptr& req, kernels::executor& dev, phase_timer& timer) {
    if (!req)
        return;
    trace::context what = trace::current();
    if (what.wait_for == trace::kind::wait) // a ring's receive unless the caller named it
        what.wait_for = trace::kind::recv;
    const trace::scope named(what);
    kernels::phase_scope wait(dev, timer, phase::comm_wait);
    req->wait();
    req.reset();
}

pending_exchange post_sendrecv(comm::communicator& c, kernels::executor& dev, const void* send,
                               void* recv, std::size_t bytes, int dest, int source, int tag,
                               const kernels::mark& send_ready, const kernels::mark& recv_free,
                               bool wait_now, phase_timer& timer) {
    pending_exchange x;
    x.recv_free = recv_free;
    if (c.stream_ordered()) // the receive is enqueued now: after the compute still reading it
        dev.stream_wait(c.stream(), recv_free);
    order_comm_after(c, dev, send_ready);
    if (kernels::event_recorder* on_stream = stream_tracer(c, dev))
        x.req = sendrecv_on_stream(c, *on_stream, send, recv, bytes, dest, source, tag);
    else
        x.req = c.isendrecv(send, bytes, dest, recv, bytes, source, comm::dtype::u8, tag);
    if (trace::recorder* r = trace::active(); r && !stream_tracer(c, dev)) {
        const double b = static_cast<double>(bytes);
        x.req = std::make_unique<traced_request>(
            std::move(x.req),
            std::vector<std::size_t>{posted(*r, trace::kind::send, dest, tag, b),
                                     posted(*r, trace::kind::recv, source, tag, b)});
    }
    if (wait_now)
        finish_exchange(c, dev, x, timer);
    return x;
}

void finish_exchange(comm::communicator& c, kernels::executor& dev, pending_exchange& x,
                     phase_timer& timer) {
    if (!x.req)
        return;
    if (!c.stream_ordered())
        dev.host_wait(x.recv_free); // a host-ordered receive lands inside wait()
    wait_exposed(x.req, dev, timer);
}

kernels::progress_fn tester(pending_exchange* a, pending_exchange* b) {
    return [a, b] {
        for (pending_exchange* x : {a, b})
            if (x && x->req)
                x->req->test();
    };
}

} // namespace ringscale::jobs::schemes
