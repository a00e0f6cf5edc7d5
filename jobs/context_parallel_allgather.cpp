// context_parallel --variant allgather (Llama 3's context parallelism): every rank
// all-gathers K and V, then computes its own queries against every block; the backward
// reduce-scatters the dK/dV partials home to their owners. The gather is posted first and
// overlaps the local block's compute. The reduce-scatter is a ring (P-1 block sends, as in a
// bandwidth-optimal reduce-scatter) pipelined with the backward's compute: a block's partial
// sum moves on while the next block is computed. (MPI_Reduce_scatter_block here ran at
// ~0.1 GB/s, two orders below all-gather, which would measure the MPI library rather than
// the scheme.) Memory grows with S: each rank holds all of K and V.
#include "jobs/context_parallel.hpp"
#include "jobs/schemes/device_exchange.hpp"
#include "kernels/mask_count.hpp"
#include "src/base/results_schema.hpp"

namespace ringscale::jobs {

namespace {

using kernels::attention_shape;
using kernels::mark;
using kernels::phase_scope;

class allgather_case final : public case_runner {
  public:
    allgather_case(const attention_problem& pr, run_context& ctx)
        : m_pr(pr), m_seed(ctx.seed), m_comm(ctx.world), m_control(ctx.control), m_dev(ctx.dev),
          m_shape(pr.local_shape(ctx.world.size())),
          m_pos(attention_positions(pr, ctx.world.size())) {}

    attr_map describe() const override {
        attr_map a = attention_attrs(m_pr, m_pos);
        add_masked_attn_kernel(a, m_pr.mask != nullptr, m_dev.kind());
        a[schema::attr::ulysses_degree] = std::int64_t{1};
        a[schema::attr::ring_degree] = std::int64_t{1};
        a[schema::attr::gathered_kv_bytes] = static_cast<double>(gathered_bytes());
        a[schema::attr::comm_bytes_per_iter] = bytes_sent();
        return a;
    }

    void setup() override {
        const int p = m_comm.size();
        for (int r = 0; r < p; ++r)
            m_dev_pos.emplace_back(m_dev, m_pos[static_cast<std::size_t>(r)]);
        m_mask = kernels::dev_mask(m_dev, m_pr.mask); // the mask's arrays where kernels read them
        m_shape.mask = m_mask.view();
        const auto& mine = m_pos[static_cast<std::size_t>(m_comm.rank())];
        const std::size_t qe = q_elems(), kve = kv_elems();
        std::vector<float> host(qe);
        fill_shard(tensor_id::q, m_seed, m_pr, 0, m_pr.heads, mine, host.data());
        m_q = upload_as(m_dev, m_pr.type, host);
        host.resize(2 * kve);
        fill_shard(tensor_id::k, m_seed, m_pr, 0, m_pr.kv_heads, mine, host.data());
        fill_shard(tensor_id::v, m_seed, m_pr, 0, m_pr.kv_heads, mine, host.data() + kve);
        m_kv = upload_as(m_dev, m_pr.type, host);
        m_o.allocate(m_dev, qe);
        m_lse.allocate(m_dev, qe / static_cast<std::size_t>(m_pr.head_dim));
        m_all.allocate(m_dev, gathered_bytes());
        if (m_pr.backward) {
            host.resize(qe);
            fill_shard(tensor_id::d_out, m_seed, m_pr, 0, m_pr.heads, mine, host.data());
            m_do = upload_as(m_dev, m_pr.type, host);
            m_dq.allocate(m_dev, qe);
            m_delta.allocate(m_dev, m_lse.size());
            for (auto* b : {&m_dkv, &m_dkv_local, &m_dkv_send, &m_dkv_recv})
                b->allocate(m_dev, 2 * kve);
        }
    }

    void iterate(phase_timer& timer) override {
        forward(timer);
        if (m_pr.backward)
            backward(timer);
    }

    validation validate() override {
        const std::vector<float> o = m_o.download();
        attention_result r;
        r.o = gather_global(m_control, m_pr, m_pr.heads, o.data(), m_pos);
        if (m_pr.backward) {
            const std::vector<float> dq = m_dq.download(), dkv = m_dkv.download();
            r.dq = gather_global(m_control, m_pr, m_pr.heads, dq.data(), m_pos);
            r.dk = gather_global(m_control, m_pr, m_pr.kv_heads, dkv.data(), m_pos);
            r.dv = gather_global(m_control, m_pr, m_pr.kv_heads, dkv.data() + kv_elems(), m_pos);
        }
        return validate_attention(m_control, m_pr, m_seed, r);
    }

  private:
    std::size_t q_elems() const {
        return static_cast<std::size_t>(kernels::attention_q_elems(m_shape));
    }
    std::size_t kv_elems() const {
        return static_cast<std::size_t>(kernels::attention_kv_elems(m_shape));
    }
    std::size_t kv_bytes() const { return kv_elems() * kernels::elem_bytes(m_pr.type); }
    // Every rank's [K | V] block, rank r's at r * 2 * kv_bytes().
    std::size_t gathered_bytes() const {
        return 2 * kv_bytes() * static_cast<std::size_t>(m_comm.size());
    }
    double bytes_sent() const {
        // all_gather sends our block to P-1 ranks; the ring reduce-scatter P-1 fp32 partial sums.
        const double p1 = m_comm.size() - 1;
        const double gather = 2.0 * static_cast<double>(kv_bytes()) * p1;
        const double reduce = 2.0 * static_cast<double>(kv_elems()) * sizeof(float) * p1;
        return m_pr.backward ? gather + reduce : gather;
    }
    const unsigned char* block_of(int rank) const {
        return m_all.data() + 2 * kv_bytes() * static_cast<std::size_t>(rank);
    }
    kernels::row_positions pos(int rank) const {
        return m_dev_pos[static_cast<std::size_t>(rank)].view();
    }
    bool masked(int src) const {
        const auto q = pos(m_comm.rank()), k = pos(src);
        return !kernels::any_visible(m_shape.mask, m_shape.causal, q.host, q.count, k.host,
                                     k.count);
    }

    void block_backward(int src, pending_exchange* pending);
    void forward(phase_timer& timer);
    void backward(phase_timer& timer);

    attention_problem m_pr;
    std::uint64_t m_seed;
    comm::communicator& m_comm;
    comm::communicator& m_control;
    kernels::executor& m_dev;
    attention_shape m_shape;
    std::vector<std::vector<std::int64_t>> m_pos;
    std::vector<kernels::dev_positions> m_dev_pos;
    kernels::dev_mask m_mask;
    kernels::dev_buffer<unsigned char> m_q, m_kv, m_all, m_do; // m_pr.type
    kernels::dev_buffer<float> m_o, m_lse, m_dq, m_delta, m_dkv;
    kernels::dev_buffer<float> m_dkv_local, m_dkv_send, m_dkv_recv; // ring reduce-scatter
};

void allgather_case::forward(phase_timer& timer) {
    const int p = m_comm.size(), me = m_comm.rank();
    const std::size_t kvb = kv_bytes();
    // The gather reads our own K|V (written at setup) and writes m_all, which no compute of
    // this iteration has read yet (the last iteration ended with the device idle).
    pending_exchange gather;
    gather.req = m_comm.iall_gather(m_kv.data(), m_all.data(), 2 * kvb, comm::dtype::u8);
    {
        // Our own block needs no communication: compute it while the gather runs.
        phase_scope compute(m_dev, timer, phase::compute);
        kernels::attention_fwd_init(m_dev, m_shape, m_o.data(), m_lse.data());
        kernels::attention_fwd(m_dev, m_shape, m_pr.type, m_q.data(), m_kv.data(),
                               m_kv.data() + kvb, pos(me), pos(me), m_o.data(), m_lse.data(),
                               kernels::attention_split::per_group, tester(&gather, nullptr));
    }
    finish_exchange(m_comm, m_dev, gather, timer);
    phase_scope compute(m_dev, timer, phase::compute);
    for (int s = 1; s < p; ++s) {
        const int src = (me - s + p) % p;
        if (masked(src))
            continue;
        const unsigned char* block = block_of(src);
        kernels::attention_fwd(m_dev, m_shape, m_pr.type, m_q.data(), block, block + kvb, pos(me),
                               pos(src), m_o.data(), m_lse.data(),
                               kernels::attention_split::per_group, {});
    }
}

// Our queries' share of block `src`'s dK/dV into m_dkv_local (and their dQ into m_dq).
void allgather_case::block_backward(int src, pending_exchange* pending) {
    const std::size_t kve = kv_elems(), kvb = kv_bytes();
    m_dev.zero(m_dkv_local.data(), m_dkv_local.bytes());
    if (masked(src))
        return;
    const unsigned char* block = block_of(src);
    float* grad = m_dkv_local.data();
    kernels::attention_bwd(m_dev, m_shape, m_pr.type, m_q.data(), block, block + kvb, m_do.data(),
                           m_lse.data(), m_delta.data(), pos(m_comm.rank()), pos(src), m_dq.data(),
                           grad, grad + kve, kernels::attention_split::per_group,
                           tester(pending, nullptr));
}

void allgather_case::backward(phase_timer& timer) {
    const int p = m_comm.size(), me = m_comm.rank();
    const std::size_t grad_elems = 2 * kv_elems();
    {
        phase_scope compute(m_dev, timer, phase::compute);
        kernels::attention_bwd_delta(m_dev, m_shape, m_pr.type, m_o.data(), m_do.data(),
                                     m_delta.data());
        m_dev.zero(m_dq.data(), m_dq.bytes());
    }
    // Block b's partial sum starts at rank b+1 and travels the ring to b: at step s this rank
    // adds its share of block (me-s-1) mod P to the sum arriving from prev and passes it on;
    // at the last step the block is our own and the sum is complete.
    pending_exchange x;
    for (int s = 0; s < p; ++s) {
        const int b = ((me - s - 1) % p + p) % p;
        {
            phase_scope compute(m_dev, timer, phase::compute);
            block_backward(b, &x);
        }
        finish_exchange(m_comm, m_dev, x, timer);
        {
            phase_scope compute(m_dev, timer, phase::compute);
            float* out = s == p - 1 ? m_dkv.data() : m_dkv_send.data();
            if (s > 0)
                kernels::add(m_dev, grad_elems, m_dkv_local.data(), m_dkv_recv.data(), out);
            else
                m_dev.copy(out, m_dkv_local.data(), grad_elems * sizeof(float));
        }
        if (s < p - 1) {
            const mark summed = m_dev.record(); // wrote the send buffer, read the receive one
            x = post_sendrecv(m_comm, m_dev, m_dkv_send.data(), m_dkv_recv.data(),
                              grad_elems * sizeof(float), (me + 1) % p, (me - 1 + p) % p, 3, summed,
                              summed, false, timer);
        }
    }
}

} // namespace

std::unique_ptr<case_runner> make_allgather_case(const attention_problem& pr, run_context& ctx) {
    return std::make_unique<allgather_case>(pr, ctx);
}

} // namespace ringscale::jobs
