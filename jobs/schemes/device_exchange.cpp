#include "jobs/schemes/device_exchange.hpp"

namespace ringscale::jobs::schemes {

void order_comm_after(comm::communicator& c, kernels::executor& dev, const kernels::mark& m) {
    if (c.stream_ordered())
        dev.stream_wait(c.stream(), m);
    else
        dev.host_wait(m);
}

void wait_exposed(comm::request_ptr& req, kernels::executor& dev, phase_timer& timer) {
    if (!req)
        return;
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
    x.req = c.isendrecv(send, bytes, dest, recv, bytes, source, comm::dtype::u8, tag);
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
