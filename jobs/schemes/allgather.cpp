// The all-gather scheme (Llama 3's context parallelism): every rank all-gathers K and V, then
// computes its own queries against every block; the backward reduce-scatters the dK/dV
// partials home to their owners. The gather is posted first and overlaps the local block's
// compute. The reduce-scatter is a ring (P-1 block sends, as in a bandwidth-optimal
// reduce-scatter) pipelined with the backward's compute: a block's partial sum moves on while
// the next block is computed. (MPI_Reduce_scatter_block here ran at ~0.1 GB/s, two orders
// below all-gather, which would measure the MPI library rather than the scheme.) Memory grows
// with S: each rank holds all of K and V. Without keep_forward the backward gathers K and V
// again (as FSDP re-gathers parameters) instead of keeping every layer's gathered copy.
#include "jobs/schemes/cp_attention.hpp"
#include "jobs/schemes/device_exchange.hpp"
#include "kernels/mask_count.hpp"
#include "src/base/results_schema.hpp"

namespace ringscale::jobs::schemes {

namespace {

using kernels::mark;
using kernels::phase_scope;

class allgather_attention final : public cp_attention {
  public:
    allgather_attention(const cp_config& c, comm::communicator& comm, kernels::executor& dev,
                        const kernels::attention_shape& local,
                        std::vector<std::vector<std::int64_t>> positions)
        : m_comm(comm), m_dev(dev), m_type(c.type), m_merge_in_dtype(c.merge_in_dtype),
          m_keep(c.keep_forward), m_shape(local), m_pos(std::move(positions)) {}

    void prepare(const kernels::attention_shape& s, bool backward) override;
    void forward(const void* q, const void* kv, float* o, float* lse, phase_timer& timer) override;
    void backward(const void* q, const void* kv, const float* o, const void* d_o, const float* lse,
                  float* dq, float* dkv, phase_timer& timer) override;

    double bytes_sent(bool backward) const override {
        // all_gather sends our block to P-1 ranks (again in a backward without keep_forward);
        // the ring reduce-scatter P-1 fp32 partial sums.
        const double p1 = m_comm.size() - 1;
        const double gather = 2.0 * static_cast<double>(kv_bytes()) * p1;
        const double reduce = 2.0 * static_cast<double>(kv_elems()) * sizeof(float) * p1;
        return backward ? gather * (m_keep ? 1 : 2) + reduce : gather;
    }
    std::vector<std::vector<std::int64_t>> work_positions() const override { return m_pos; }
    void describe(results::attr_map& a) const override {
        a[schema::attr::ulysses_degree] = std::int64_t{1};
        a[schema::attr::ring_degree] = std::int64_t{1};
        a[schema::attr::gathered_kv_bytes] = static_cast<double>(gathered_bytes());
    }

  private:
    std::size_t kv_elems() const {
        return static_cast<std::size_t>(kernels::attention_kv_elems(m_shape));
    }
    std::size_t kv_bytes() const { return kv_elems() * kernels::elem_bytes(m_type); }
    // --merge dtype: the running O kept in the dtype between blocks.
    void round_merged(float* o) {
        if (m_merge_in_dtype)
            kernels::round_values(m_dev, m_type,
                                  static_cast<std::size_t>(kernels::attention_q_elems(m_shape)), o);
    }
    // Every rank's [K | V] block, rank r's at r * 2 * kv_bytes().
    std::size_t gathered_bytes() const {
        return 2 * kv_bytes() * static_cast<std::size_t>(m_comm.size());
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
    pending_exchange post_gather(const void* kv) {
        // Writes m_all, which no compute of this pass has read yet: an earlier pass's reads
        // are ordered before it by the caller (or ended with the device idle).
        pending_exchange x;
        x.req = traced_post(
            m_comm, m_dev, trace::kind::all_gather, 2.0 * static_cast<double>(kv_bytes()),
            [&] { return m_comm.iall_gather(kv, m_all.data(), 2 * kv_bytes(), comm::dtype::u8); });
        return x;
    }
    void finish_gather(pending_exchange& x, phase_timer& timer) {
        trace::context what = trace::current(); // --trace: the wait is the all-gather's
        what.wait_for = trace::kind::all_gather;
        const trace::scope named(what);
        finish_exchange(m_comm, m_dev, x, timer);
    }
    void block_backward(const void* q, const void* d_o, const float* lse, float* dq, int src,
                        pending_exchange* pending);

    comm::communicator& m_comm;
    kernels::executor& m_dev;
    kernels::elem m_type;
    bool m_merge_in_dtype; ///< round O to m_type after each block (cp_config)
    bool m_keep;
    kernels::attention_shape m_shape;
    std::vector<std::vector<std::int64_t>> m_pos;
    std::vector<kernels::dev_positions> m_dev_pos;
    kernels::dev_buffer<unsigned char> m_all;           // m_type
    kernels::dev_buffer<float> m_lse, m_delta;          // m_lse: when the caller keeps none
    kernels::dev_buffer<float> m_local, m_send, m_recv; // the ring reduce-scatter's dK|dV
};

void allgather_attention::prepare(const kernels::attention_shape& s, bool backward) {
    m_shape = s;
    if (m_dev_pos.empty())
        for (const auto& p : m_pos)
            m_dev_pos.emplace_back(m_dev, p);
    auto fit = [this](auto& b, std::size_t n) {
        if (b.size() != n)
            b.allocate(m_dev, n);
    };
    const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
    fit(m_all, gathered_bytes());
    if (m_keep)
        fit(m_lse, rows);
    if (backward) {
        fit(m_delta, rows);
        for (auto* b : {&m_local, &m_send, &m_recv})
            fit(*b, 2 * kv_elems());
    }
}

void allgather_attention::forward(const void* q, const void* kv, float* o, float* lse,
                                  phase_timer& timer) {
    const int p = m_comm.size(), me = m_comm.rank();
    const std::size_t kvb = kv_bytes();
    float* l = lse ? lse : m_lse.data();
    pending_exchange gather = post_gather(kv);
    {
        // Our own block needs no communication: compute it while the gather runs.
        phase_scope compute(m_dev, timer, phase::compute);
        const auto* own = static_cast<const unsigned char*>(kv);
        kernels::attention_fwd_init(m_dev, m_shape, o, l);
        kernels::attention_fwd(m_dev, m_shape, m_type, q, own, own + kvb, pos(me), pos(me), o, l,
                               kernels::attention_split::per_group, tester(&gather, nullptr));
        round_merged(o);
    }
    finish_gather(gather, timer);
    phase_scope compute(m_dev, timer, phase::compute);
    for (int s = 1; s < p; ++s) { // nothing in flight: each block in one call
        const int src = (me - s + p) % p;
        if (masked(src))
            continue;
        const unsigned char* block = block_of(src);
        kernels::attention_fwd(m_dev, m_shape, m_type, q, block, block + kvb, pos(me), pos(src), o,
                               l, kernels::attention_split::whole, {});
        round_merged(o);
    }
}

// Our queries' share of block `src`'s dK/dV into m_local (and their dQ into dq).
void allgather_attention::block_backward(const void* q, const void* d_o, const float* lse,
                                         float* dq, int src, pending_exchange* pending) {
    const std::size_t kve = kv_elems(), kvb = kv_bytes();
    m_dev.zero(m_local.data(), m_local.bytes());
    if (masked(src))
        return;
    const unsigned char* block = block_of(src);
    float* grad = m_local.data();
    kernels::attention_bwd(m_dev, m_shape, m_type, q, block, block + kvb, d_o, lse, m_delta.data(),
                           pos(m_comm.rank()), pos(src), dq, grad, grad + kve,
                           kernels::attention_split::per_group, tester(pending, nullptr));
}

void allgather_attention::backward(const void* q, const void* kv, const float* o, const void* d_o,
                                   const float* lse, float* dq, float* dkv, phase_timer& timer) {
    const int p = m_comm.size(), me = m_comm.rank();
    const std::size_t grad_elems = 2 * kv_elems();
    const float* l = lse ? lse : m_lse.data();
    if (!m_keep) { // every layer's forward gathered since this one's: gather its K/V again
        pending_exchange gather = post_gather(kv);
        finish_gather(gather, timer);
    }
    {
        phase_scope compute(m_dev, timer, phase::compute);
        kernels::attention_bwd_delta(m_dev, m_shape, m_type, o, d_o, m_delta.data());
        m_dev.zero(dq,
                   static_cast<std::size_t>(kernels::attention_q_elems(m_shape)) * sizeof(float));
    }
    // Block b's partial sum starts at rank b+1 and travels the ring to b: at step s this rank
    // adds its share of block (me-s-1) mod P to the sum arriving from prev and passes it on;
    // at the last step the block is our own and the sum is complete.
    pending_exchange x;
    for (int s = 0; s < p; ++s) {
        const int b = ((me - s - 1) % p + p) % p;
        trace::context step = trace::current();
        step.step = s;
        const trace::scope traced_step(step);
        {
            phase_scope compute(m_dev, timer, phase::compute);
            block_backward(q, d_o, l, dq, b, &x);
        }
        finish_exchange(m_comm, m_dev, x, timer);
        {
            phase_scope compute(m_dev, timer, phase::compute);
            float* out = s == p - 1 ? dkv : m_send.data();
            if (s > 0)
                kernels::add(m_dev, grad_elems, m_local.data(), m_recv.data(), out);
            else
                m_dev.copy(out, m_local.data(), grad_elems * sizeof(float));
        }
        if (s < p - 1) {
            const mark summed = m_dev.record(); // wrote the send buffer, read the receive one
            x = post_sendrecv(m_comm, m_dev, m_send.data(), m_recv.data(),
                              grad_elems * sizeof(float), (me + 1) % p, (me - 1 + p) % p, 3, summed,
                              summed, false, timer);
        }
    }
}

} // namespace

std::unique_ptr<cp_attention> make_allgather_attention(const cp_config& c, comm::communicator& comm,
                                                       kernels::executor& dev,
                                                       const kernels::attention_shape& local,
                                                       std::vector<std::vector<std::int64_t>> pos) {
    return std::make_unique<allgather_attention>(c, comm, dev, local, std::move(pos));
}

} // namespace ringscale::jobs::schemes
