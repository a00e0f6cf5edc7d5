#include "jobs/ring_core.hpp"

#include "kernels/layout.hpp"

#include <algorithm>

namespace ringscale::jobs {

namespace {

using kernels::attention_shape;

int next_rank(const ring_spec& s) {
    return (s.comm->rank() + 1) % s.comm->size();
}
int prev_rank(const ring_spec& s) {
    return (s.comm->rank() + s.comm->size() - 1) % s.comm->size();
}

// Post the exchange for the next step; with overlap off, wait for it at once.
comm::request_ptr exchange(const ring_spec& s, const float* send, float* recv, std::size_t count,
                           int tag, phase_timer& timer) {
    auto req = s.comm->isendrecv(send, count, next_rank(s), recv, count, prev_rank(s),
                                 comm::dtype::f32, tag);
    if (!s.overlap) {
        auto wait = timer.time(phase::comm_wait);
        req->wait();
    }
    return req;
}

void wait(comm::request_ptr& req, phase_timer& timer) {
    if (!req)
        return;
    auto scope = timer.time(phase::comm_wait);
    req->wait();
    req.reset();
}

const std::vector<std::int64_t>& pos_of(const ring_spec& s, int rank) {
    return (*s.positions)[static_cast<std::size_t>(rank)];
}

bool masked(const ring_spec& s, int src) {
    const auto& q = pos_of(s, s.comm->rank());
    const auto& k = pos_of(s, src);
    return kernels::classify_block(q.data(), s.shape.q_len, k.data(), s.shape.k_len,
                                   s.shape.causal) == kernels::block_mask::masked;
}

// The K/V block held at step s: our own at step 0, then the ring buffers in turn.
const float* block_at(const float* own, ring_buffers& b, int step) {
    return step == 0 ? own : b.kv[(step - 1) % 2].data();
}

// One kernel call per (batch, kv-head group); between calls the outstanding requests are
// tested so MPI keeps moving the next block while we compute.
template <class F>
void per_group(const attention_shape& shape, F&& f, comm::request* a, comm::request* b) {
    const std::int64_t g = shape.heads / shape.kv_heads;
    attention_shape one = shape;
    one.batch = 1;
    one.heads = g;
    one.kv_heads = 1;
    for (std::int64_t bt = 0; bt < shape.batch; ++bt)
        for (std::int64_t kvh = 0; kvh < shape.kv_heads; ++kvh) {
            f(one, (bt * shape.heads + kvh * g) * shape.q_len,
              (bt * shape.kv_heads + kvh) * shape.k_len);
            if (a)
                a->test();
            if (b)
                b->test();
        }
}

} // namespace

std::size_t ring_kv_elems(const ring_spec& s) {
    return static_cast<std::size_t>(kernels::attention_kv_elems(s.shape));
}
std::size_t ring_q_elems(const ring_spec& s) {
    return static_cast<std::size_t>(kernels::attention_q_elems(s.shape));
}

void ring_buffers::reserve(const ring_spec& spec, bool backward) {
    const std::size_t kv_block = 2 * ring_kv_elems(spec);
    for (auto& b : kv)
        b.resize(spec.comm->size() > 1 ? kv_block : 0);
    if (backward) {
        dkv_local.resize(kv_block);
        dkv_send.resize(kv_block);
    }
    kernels::attention_workspace_reserve(ws);
}

double ring_bytes_sent(const ring_spec& spec, bool backward) {
    const double block = 2.0 * ring_kv_elems(spec) * sizeof(float);
    const int p = spec.comm->size();
    return (p - 1) * block + (backward ? (p - 1) * block + p * block : 0.0);
}

void ring_forward(const ring_spec& spec, const float* q, const float* kv, float* o, float* lse,
                  ring_buffers& bufs, phase_timer& timer) {
    const int p = spec.comm->size(), me = spec.comm->rank();
    const std::int64_t d = spec.shape.head_dim;
    const std::size_t kve = ring_kv_elems(spec);
    const auto& q_pos = pos_of(spec, me);
    {
        auto compute = timer.time(phase::compute);
        kernels::attention_fwd_init(spec.shape, o, lse);
    }
    for (int s = 0; s < p; ++s) {
        const float* block = block_at(kv, bufs, s);
        const int src = kernels::ring_source_rank(me, s, p);
        comm::request_ptr req;
        if (s < p - 1)
            req = exchange(spec, block, bufs.kv[s % 2].data(), 2 * kve, 1, timer);
        if (!masked(spec, src)) {
            auto compute = timer.time(phase::compute);
            const auto& k_pos = pos_of(spec, src);
            per_group(
                spec.shape,
                [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
                    kernels::attention_fwd_cpu(one, q + q_row * d, block + k_row * d,
                                               block + kve + k_row * d, q_pos.data(), k_pos.data(),
                                               o + q_row * d, lse + q_row, bufs.ws);
                },
                req.get(), nullptr);
        }
        wait(req, timer);
    }
}

void ring_backward(const ring_spec& spec, const float* q, const float* kv, const float* o,
                   const float* d_o, const float* lse, float* delta, float* dq, float* dkv,
                   ring_buffers& bufs, phase_timer& timer) {
    const int p = spec.comm->size(), me = spec.comm->rank();
    const std::int64_t d = spec.shape.head_dim;
    const std::size_t kve = ring_kv_elems(spec), block_elems = 2 * kve;
    const auto& q_pos = pos_of(spec, me);
    {
        auto compute = timer.time(phase::compute);
        kernels::attention_bwd_delta(spec.shape, o, d_o, delta);
        std::fill(dq, dq + ring_q_elems(spec), 0.0f);
    }
    // `dkv` receives the partial sums from prev; at the end it holds our block's total.
    comm::request_ptr req_dkv;
    for (int s = 0; s < p; ++s) {
        const float* block = block_at(kv, bufs, s);
        const int src = kernels::ring_source_rank(me, s, p);
        comm::request_ptr req_kv;
        if (s < p - 1)
            req_kv = exchange(spec, block, bufs.kv[s % 2].data(), block_elems, 1, timer);
        float* local = bufs.dkv_local.data();
        {
            auto compute = timer.time(phase::compute);
            std::fill(local, local + block_elems, 0.0f);
            if (!masked(spec, src)) {
                const auto& k_pos = pos_of(spec, src);
                per_group(
                    spec.shape,
                    [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
                        kernels::attention_bwd_cpu(
                            one, q + q_row * d, block + k_row * d, block + kve + k_row * d,
                            d_o + q_row * d, lse + q_row, delta + q_row, q_pos.data(), k_pos.data(),
                            dq + q_row * d, local + k_row * d, local + kve + k_row * d, bufs.ws);
                    },
                    req_kv.get(), req_dkv.get());
            }
        }
        // The partial dK/dV of this block from its earlier holders arrives from prev; add
        // ours and pass the sum on. After P steps each block's sum is back at its owner.
        wait(req_dkv, timer);
        {
            auto compute = timer.time(phase::compute);
            float* out = bufs.dkv_send.data();
            for (std::size_t i = 0; i < block_elems; ++i)
                out[i] = local[i] + (s > 0 ? dkv[i] : 0.0f);
        }
        req_dkv = exchange(spec, bufs.dkv_send.data(), dkv, block_elems, 2, timer);
        wait(req_kv, timer);
    }
    wait(req_dkv, timer);
}

} // namespace ringscale::jobs
