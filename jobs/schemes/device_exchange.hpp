// Communication between compute on a kernels::executor: the ordering rules of
// kernels/executor.hpp applied to a communicator, and a posted send/receive that knows which
// compute it must not overtake. On the CPU every mark is empty and these reduce to plain
// MPI calls; on CUDA a stream-ordered communicator (NCCL) waits for compute on its own
// stream, a host-ordered one (staged MPI) by a host wait.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/event_recorder.hpp"
#include "kernels/kernels.hpp"
#include "src/base/clock.hpp"
#include "src/base/trace_events.hpp"

namespace ringscale::jobs::schemes {

/// Order a communication that reads buffers written by the compute up to `m` after it:
/// a stream wait for a stream-ordered communicator (NCCL), a host wait otherwise.
void order_comm_after(comm::communicator& c, kernels::executor& dev, const kernels::mark& m);

/// Wait for `req` (when set) as exposed communication: timed on the device, so on CUDA it is
/// the time the compute stream stood idle for it. Resets `req`.
void wait_exposed(comm::request_ptr& req, kernels::executor& dev, phase_timer& timer);

/// A posted exchange and the compute its receive must not overtake.
struct pending_exchange {
    comm::request_ptr req;
    kernels::mark recv_free; ///< the compute that last read the receive buffer
};

/// Post isendrecv of `bytes` (send to `dest`, receive from `source`) on `c`. `send_ready`:
/// the compute that produced the send buffer (empty when communication produced it);
/// `recv_free`: the compute that last read the receive buffer. With `wait_now` the
/// exchange is waited for at once (exposed).
pending_exchange post_sendrecv(comm::communicator& c, kernels::executor& dev, const void* send,
                               void* recv, std::size_t bytes, int dest, int source, int tag,
                               const kernels::mark& send_ready, const kernels::mark& recv_free,
                               bool wait_now, phase_timer& timer);

/// Wait for a posted exchange as exposed communication (no-op when none is pending).
void finish_exchange(comm::communicator& c, kernels::executor& dev, pending_exchange& x,
                     phase_timer& timer);

/// --trace: `req` wrapped to record a transfer of kind `k` (`bytes`) from now to its observed
/// completion; `req` itself when not tracing.
comm::request_ptr traced(comm::request_ptr req, trace::kind k, double bytes);

/// The device's event recorder when it traces and `c` orders its work on a stream (NCCL): a
/// transfer is then a span on c's stream, as the stream runs it; null otherwise.
kernels::event_recorder* stream_tracer(comm::communicator& c, kernels::executor& dev);

/// --trace: the collective `post()` posts on `c` (returning its request), recorded as a
/// transfer of kind `k` (`bytes`): a span on c's stream where c is stream-ordered and the
/// device records events, else from posting to observed completion on the host clock.
template <class Post>
comm::request_ptr traced_post(comm::communicator& c, kernels::executor& dev, trace::kind k,
                              double bytes, Post&& post) {
    kernels::event_recorder* on_stream = stream_tracer(c, dev);
    if (!on_stream)
        return traced(post(), k, bytes);
    const std::size_t span = on_stream->open(c.stream());
    comm::request_ptr req = post();
    kernels::span_label what;
    what.traced = true;
    what.event.what = k;
    what.event.step = trace::current().step;
    what.event.layer = trace::current().layer;
    what.event.bytes = bytes;
    on_stream->close(span, what);
    return req;
}

/// A progress function for CPU kernels: tests the pending requests of `a` and `b` (may be null).
kernels::progress_fn tester(pending_exchange* a, pending_exchange* b);

} // namespace ringscale::jobs::schemes
