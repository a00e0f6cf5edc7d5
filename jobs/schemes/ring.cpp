#include "jobs/schemes/ring.hpp"

#include "kernels/layout.hpp"
#include "kernels/mask_count.hpp"

namespace ringscale::jobs::schemes {

namespace {

using kernels::attention_shape;
using kernels::mark;
using kernels::phase_scope;

kernels::row_positions pos_of(const ring_spec& s, int rank) {
    return (*s.positions)[static_cast<std::size_t>(rank)].view();
}

bool masked_for(const ring_spec& s, int rank, int src) {
    const auto q = pos_of(s, rank);
    const auto k = pos_of(s, src);
    return !kernels::any_visible(s.shape.mask, s.shape.causal, q.host, q.count, k.host, k.count);
}

int steps_of(const ring_spec& s) {
    return s.steps > 0 ? s.steps : s.comm->size();
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
    return post_sendrecv(*s.comm, *s.dev, send, recv, bytes,
                         kernels::ring_next(s.comm->rank(), s.comm->size()),
                         kernels::ring_prev(s.comm->rank(), s.comm->size()), tag, send_ready,
                         recv_free, !s.overlap, timer);
}

void finish(const ring_spec& s, pending_exchange& x, phase_timer& timer) {
    finish_exchange(*s.comm, *s.dev, x, timer);
}

// The last step's dK/dV sum of block `owner` goes home; ours comes from the rank as far ahead
// as the owner is behind (the next rank when the ring ran all P steps; a copy when 1).
void send_home(const ring_spec& s, const float* sum, float* ours, std::size_t elems, int owner,
               pending_exchange& x, const mark& summed, phase_timer& timer) {
    const int p = s.comm->size(), me = s.comm->rank();
    if (owner == me) {
        s.dev->copy(ours, sum, elems * sizeof(float));
        return;
    }
    const int from = (2 * me - owner + p) % p;
    x = post_sendrecv(*s.comm, *s.dev, sum, ours, elems * sizeof(float), owner, from, 2, summed,
                      summed, !s.overlap, timer);
}

// --trace: ring step `step` and its block's FLOPs (`per_pair` per visible query-key pair, head
// and dimension). The pairs are counted once per case, the first time a traced pass asks (a
// warm-up iteration's): a launch without --trace never counts them.
trace::context step_context(const ring_spec& s, ring_buffers& b, int step, int src,
                            double per_pair) {
    trace::context c = trace::current();
    c.step = step;
    if (!trace::active())
        return c;
    const int p = s.comm->size();
    if (static_cast<int>(b.pairs.size()) != p)
        for (int r = 0; r < p; ++r) {
            const auto q = pos_of(s, s.comm->rank()), k = pos_of(s, r);
            b.pairs.push_back(static_cast<double>(kernels::count_visible(
                s.shape.mask, s.shape.causal, q.host, q.count, k.host, k.count)));
        }
    c.flops = per_pair * b.pairs[static_cast<std::size_t>(src)] *
              static_cast<double>(s.shape.batch * s.shape.heads * s.shape.head_dim);
    return c;
}

trace::context merge_context() {
    trace::context c = trace::current();
    c.compute = trace::kind::merge;
    c.flops = 0;
    return c;
}

} // namespace

std::size_t ring_kv_elems(const ring_spec& s) {
    return static_cast<std::size_t>(kernels::attention_kv_elems(s.shape));
}
std::size_t ring_q_elems(const ring_spec& s) {
    return static_cast<std::size_t>(kernels::attention_q_elems(s.shape));
}

int ring_steps_needed(const kernels::attention_shape& shape,
                      const std::vector<std::vector<std::int64_t>>& positions) {
    const int p = static_cast<int>(positions.size());
    if (!kernels::mask_active(shape.mask))
        return p;
    int last = 0;
    for (int r = 0; r < p; ++r)
        for (int s = p - 1; s > last; --s) {
            const auto src = static_cast<std::size_t>(kernels::ring_source_rank(r, s, p));
            if (kernels::any_visible(shape.mask, shape.causal,
                                     positions[static_cast<std::size_t>(r)], positions[src])) {
                last = s;
                break;
            }
        }
    return last + 1;
}

void ring_buffers::reserve(const ring_spec& spec, bool backward) {
    if (static_cast<int>(visible.size()) != spec.comm->size()) // the mask is fixed per case
        for (int r = 0; r < spec.comm->size(); ++r)
            visible.push_back(!masked_for(spec, spec.comm->rank(), r));
    const std::size_t block = 2 * kv_bytes(spec);
    for (auto& b : kv)
        if (b.size() != (spec.comm->size() > 1 ? block : 0))
            b.allocate(*spec.dev, spec.comm->size() > 1 ? block : 0);
    if (backward)
        for (auto* b : {&dkv_local, &dkv_send})
            if (b->size() != 2 * ring_kv_elems(spec))
                b->allocate(*spec.dev, 2 * ring_kv_elems(spec));
}

double ring_bytes_sent(const ring_spec& spec, bool backward) {
    const double block = 2.0 * static_cast<double>(kv_bytes(spec));
    const double grads = 2.0 * static_cast<double>(ring_kv_elems(spec)) * sizeof(float);
    const int n = steps_of(spec);
    return (n - 1) * block + (backward ? (n - 1) * block + (n > 1 ? n : 0) * grads : 0.0);
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
    const int steps = steps_of(spec);
    for (int s = 0; s < steps; ++s) {
        const unsigned char* block = block_at(kv, bufs, s);
        const int src = kernels::ring_source_rank(me, s, p);
        const trace::scope traced_step(step_context(spec, bufs, s, src, 4.0));
        pending_exchange x;
        if (s < steps - 1)
            x = post(spec, block, bufs.kv[s % 2].data(), 2 * kvb, 1, {}, last_read, timer);
        if (bufs.visible[static_cast<std::size_t>(src)]) {
            phase_scope compute(dev, timer, phase::compute);
            kernels::attention_fwd(dev, spec.shape, spec.type, q, block, block + kvb, q_pos,
                                   pos_of(spec, src), o, lse, kernels::attention_split::per_group,
                                   tester(&x, nullptr));
        }
        if (spec.merge_in_dtype && bufs.visible[static_cast<std::size_t>(src)]) {
            const trace::scope merging(merge_context());
            phase_scope compute(dev, timer, phase::compute);
            kernels::round_values(dev, spec.type, ring_q_elems(spec), o); // O kept in the dtype
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
        if (o)
            kernels::attention_bwd_delta(dev, spec.shape, spec.type, o, d_o, delta);
        dev.zero(dq, ring_q_elems(spec) * sizeof(float));
    }
    // `dkv` receives the partial sums from prev; at the end it holds our block's total.
    pending_exchange x_dkv;
    mark last_read = bufs.last_read;
    const int steps = steps_of(spec);
    for (int s = 0; s < steps; ++s) {
        const unsigned char* block = block_at(kv, bufs, s);
        const int src = kernels::ring_source_rank(me, s, p);
        const trace::scope traced_step(step_context(spec, bufs, s, src, 10.0));
        pending_exchange x_kv;
        if (s < steps - 1)
            x_kv = post(spec, block, bufs.kv[s % 2].data(), 2 * kvb, 1, {}, last_read, timer);
        float* local = bufs.dkv_local.data();
        {
            phase_scope compute(dev, timer, phase::compute);
            dev.zero(local, grad_elems * sizeof(float));
            if (bufs.visible[static_cast<std::size_t>(src)])
                kernels::attention_bwd(dev, spec.shape, spec.type, q, block, block + kvb, d_o, lse,
                                       delta, q_pos, pos_of(spec, src), dq, local, local + kve,
                                       kernels::attention_split::per_group, tester(&x_kv, &x_dkv));
        }
        last_read = dev.record();
        // The partial dK/dV of this block from its earlier holders arrives from prev; add
        // ours and pass the sum on. After P steps each block's sum is back at its owner.
        finish(spec, x_dkv, timer);
        {
            const trace::scope merging(merge_context());
            phase_scope compute(dev, timer, phase::compute);
            float* out = bufs.dkv_send.data();
            if (s > 0)
                kernels::add(dev, grad_elems, local, dkv, out);
            else
                dev.copy(out, local, grad_elems * sizeof(float));
        }
        const mark summed = dev.record(); // produced dkv_send, last read dkv
        if (s < steps - 1)
            x_dkv = post(spec, bufs.dkv_send.data(), dkv, grad_elems * sizeof(float), 2, summed,
                         summed, timer);
        else // the sum is complete: home to the block's owner, ours from the rank holding it
            send_home(spec, bufs.dkv_send.data(), dkv, grad_elems, src, x_dkv, summed, timer);
        finish(spec, x_kv, timer);
    }
    finish(spec, x_dkv, timer);
    bufs.last_read = last_read;
}

} // namespace ringscale::jobs::schemes
