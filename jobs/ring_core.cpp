#include "jobs/ring_core.hpp"

#include "kernels/layout.hpp"

namespace ringscale::jobs {

namespace {

using kernels::attention_shape;
using kernels::mark;
using kernels::phase_scope;

int next_rank(const ring_spec& s) {
    return (s.comm->rank() + 1) % s.comm->size();
}
int prev_rank(const ring_spec& s) {
    return (s.comm->rank() + s.comm->size() - 1) % s.comm->size();
}

kernels::row_positions pos_of(const ring_spec& s, int rank) {
    return (*s.positions)[static_cast<std::size_t>(rank)].view();
}

bool masked(const ring_spec& s, int src) {
    const auto q = pos_of(s, s.comm->rank());
    const auto k = pos_of(s, src);
    return kernels::classify_block(q.host, q.count, k.host, k.count, s.shape.causal) ==
           kernels::block_mask::masked;
}

std::size_t kv_bytes(const ring_spec& s) {
    return ring_kv_elems(s) * kernels::elem_bytes(s.type);
}

// The K/V block held at step s: our own at step 0, then the ring buffers in turn.
const unsigned char* block_at(const void* own, ring_buffers& b, int step) {
    return step == 0 ? static_cast<const unsigned char*>(own) : b.kv[(step - 1) % 2].data();
}

// Post a ring step's exchange to next, receiving from prev (see post_sendrecv).
pending_exchange post(const ring_spec& s, const void* send, void* recv, std::size_t bytes, int tag,
                      const mark& send_ready, const mark& recv_free, phase_timer& timer) {
    return post_sendrecv(*s.comm, *s.dev, send, recv, bytes, next_rank(s), prev_rank(s), tag,
                         send_ready, recv_free, !s.overlap, timer);
}

void finish(const ring_spec& s, pending_exchange& x, phase_timer& timer) {
    finish_exchange(*s.comm, *s.dev, x, timer);
}

} // namespace

std::size_t ring_kv_elems(const ring_spec& s) {
    return static_cast<std::size_t>(kernels::attention_kv_elems(s.shape));
}
std::size_t ring_q_elems(const ring_spec& s) {
    return static_cast<std::size_t>(kernels::attention_q_elems(s.shape));
}

void ring_buffers::reserve(const ring_spec& spec, bool backward) {
    const std::size_t block = 2 * kv_bytes(spec);
    for (auto& b : kv)
        if (b.size() != (spec.comm->size() > 1 ? block : 0))
            b.allocate(*spec.dev, spec.comm->size() > 1 ? block : 0);
    if (backward) {
        dkv_local.allocate(*spec.dev, 2 * ring_kv_elems(spec));
        dkv_send.allocate(*spec.dev, 2 * ring_kv_elems(spec));
    }
}

double ring_bytes_sent(const ring_spec& spec, bool backward) {
    const double block = 2.0 * static_cast<double>(kv_bytes(spec));
    const double grads = 2.0 * static_cast<double>(ring_kv_elems(spec)) * sizeof(float);
    const int p = spec.comm->size();
    if (p <= 1)
        return 0; // one rank sends nothing: its K/V and their gradients stay home
    return (p - 1) * block + (backward ? (p - 1) * block + p * grads : 0.0);
}

void ring_forward(const ring_spec& spec, const void* q, const void* kv, float* o, float* lse,
                  ring_buffers& bufs, phase_timer& timer) {
    kernels::executor& dev = *spec.dev;
    const int p = spec.comm->size(), me = spec.comm->rank();
    const std::size_t kvb = kv_bytes(spec);
    const auto q_pos = pos_of(spec, me);
    {
        phase_scope compute(dev, timer, phase::compute);
        kernels::attention_fwd_init(dev, spec.shape, o, lse);
    }
    mark last_read = bufs.last_read; // the compute that read the buffer the next receive fills
    for (int s = 0; s < p; ++s) {
        const unsigned char* block = block_at(kv, bufs, s);
        const int src = kernels::ring_source_rank(me, s, p);
        pending_exchange x;
        if (s < p - 1)
            x = post(spec, block, bufs.kv[s % 2].data(), 2 * kvb, 1, {}, last_read, timer);
        if (!masked(spec, src)) {
            phase_scope compute(dev, timer, phase::compute);
            kernels::attention_fwd(dev, spec.shape, spec.type, q, block, block + kvb, q_pos,
                                   pos_of(spec, src), o, lse, kernels::attention_split::per_group,
                                   tester(&x, nullptr));
        }
        last_read = dev.record();
        finish(spec, x, timer);
    }
    bufs.last_read = last_read;
}

void ring_backward(const ring_spec& spec, const void* q, const void* kv, const float* o,
                   const void* d_o, const float* lse, float* delta, float* dq, float* dkv,
                   ring_buffers& bufs, phase_timer& timer) {
    kernels::executor& dev = *spec.dev;
    const int p = spec.comm->size(), me = spec.comm->rank();
    const std::size_t kvb = kv_bytes(spec), kve = ring_kv_elems(spec), grad_elems = 2 * kve;
    const auto q_pos = pos_of(spec, me);
    {
        phase_scope compute(dev, timer, phase::compute);
        kernels::attention_bwd_delta(dev, spec.shape, spec.type, o, d_o, delta);
        dev.zero(dq, ring_q_elems(spec) * sizeof(float));
    }
    // `dkv` receives the partial sums from prev; at the end it holds our block's total.
    pending_exchange x_dkv;
    mark last_read = bufs.last_read;
    for (int s = 0; s < p; ++s) {
        const unsigned char* block = block_at(kv, bufs, s);
        const int src = kernels::ring_source_rank(me, s, p);
        pending_exchange x_kv;
        if (s < p - 1)
            x_kv = post(spec, block, bufs.kv[s % 2].data(), 2 * kvb, 1, {}, last_read, timer);
        float* local = bufs.dkv_local.data();
        {
            phase_scope compute(dev, timer, phase::compute);
            dev.zero(local, grad_elems * sizeof(float));
            if (!masked(spec, src))
                kernels::attention_bwd(dev, spec.shape, spec.type, q, block, block + kvb, d_o, lse,
                                       delta, q_pos, pos_of(spec, src), dq, local, local + kve,
                                       kernels::attention_split::per_group, tester(&x_kv, &x_dkv));
        }
        last_read = dev.record();
        // The partial dK/dV of this block from its earlier holders arrives from prev; add
        // ours and pass the sum on. After P steps each block's sum is back at its owner.
        finish(spec, x_dkv, timer);
        {
            phase_scope compute(dev, timer, phase::compute);
            float* out = bufs.dkv_send.data();
            if (s > 0)
                kernels::add(dev, grad_elems, local, dkv, out);
            else
                dev.copy(out, local, grad_elems * sizeof(float));
        }
        if (p == 1) { // one rank: the sum is already home, a copy and not a message
            phase_scope compute(dev, timer, phase::compute);
            dev.copy(dkv, bufs.dkv_send.data(), grad_elems * sizeof(float));
        } else {
            const mark summed = dev.record(); // produced dkv_send, last read dkv
            x_dkv = post(spec, bufs.dkv_send.data(), dkv, grad_elems * sizeof(float), 2, summed,
                         summed, timer);
        }
        finish(spec, x_kv, timer);
    }
    finish(spec, x_dkv, timer);
    bufs.last_read = last_read;
}

} // namespace ringscale::jobs
