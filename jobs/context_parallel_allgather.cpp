// context_parallel --variant allgather (Llama 3's context parallelism): every rank
// all-gathers K and V, then computes its own queries against every block; the backward
// reduce-scatters the dK/dV partials home to their owners. The gather is posted first and
// overlaps the local block's compute. The reduce-scatter is a ring (P-1 block sends, as in a
// bandwidth-optimal reduce-scatter) pipelined with the backward's compute: a block's partial
// sum moves on while the next block is computed. (MPI_Reduce_scatter_block here ran at
// ~0.1 GB/s, two orders below all-gather, which would measure the MPI library rather than
// the scheme.) Memory grows with S: each rank holds all of K and V.
#include "jobs/context_parallel.hpp"

#include "kernels/attention_cpu.hpp"

#include <algorithm>

namespace ringscale::jobs {

namespace {

using kernels::attention_shape;

class allgather_case final : public job_case {
  public:
    allgather_case(const attention_problem& pr, run_context& ctx)
        : m_pr(pr), m_seed(ctx.seed), m_comm(ctx.world), m_shape(pr.local_shape(ctx.world.size())) {
    }

    attr_map describe() const override {
        return {{"seq_len", m_pr.seq_len},
                {"kv_heads", m_pr.kv_heads},
                {"ulysses_degree", std::int64_t{1}},
                {"ring_degree", std::int64_t{1}},
                {"gathered_kv_bytes", static_cast<double>(gathered_elems() * sizeof(float))},
                {"flops_per_iter", m_pr.flops()},
                {"comm_bytes_per_iter", bytes_sent()},
                {"flop_convention", std::string("fwd 4*B*S^2*H*D (causal /2), bwd 2.5*fwd")}};
    }

    void setup() override {
        const int p = m_comm.size();
        for (int r = 0; r < p; ++r)
            m_pos.push_back(kernels::layout_positions(m_pr.layout, m_pr.seq_len, p, r));
        const auto& mine = m_pos[static_cast<std::size_t>(m_comm.rank())];
        const std::size_t qe = q_elems(), kve = kv_elems();
        m_q.resize(qe);
        m_o.resize(qe);
        m_lse.resize(qe / static_cast<std::size_t>(m_pr.head_dim));
        m_kv.resize(2 * kve);
        m_all.resize(gathered_elems());
        fill_shard(tensor_id::q, m_seed, m_pr, 0, m_pr.heads, mine, m_q.data());
        fill_shard(tensor_id::k, m_seed, m_pr, 0, m_pr.kv_heads, mine, m_kv.data());
        fill_shard(tensor_id::v, m_seed, m_pr, 0, m_pr.kv_heads, mine, m_kv.data() + kve);
        if (m_pr.backward) {
            m_do.resize(qe);
            fill_shard(tensor_id::d_out, m_seed, m_pr, 0, m_pr.heads, mine, m_do.data());
            m_dq.resize(qe);
            m_delta.resize(m_lse.size());
            for (auto* b : {&m_dkv, &m_dkv_local, &m_dkv_send, &m_dkv_recv})
                b->resize(2 * kve);
        }
        kernels::attention_workspace_reserve(m_ws);
    }

    void iterate(phase_timer& timer) override {
        forward(timer);
        if (m_pr.backward)
            backward(timer);
    }

    validation validate() override {
        attention_result r;
        r.o = gather_global(m_comm, m_pr, m_pr.heads, m_o.data(), m_pos);
        if (m_pr.backward) {
            r.dq = gather_global(m_comm, m_pr, m_pr.heads, m_dq.data(), m_pos);
            r.dk = gather_global(m_comm, m_pr, m_pr.kv_heads, m_dkv.data(), m_pos);
            r.dv = gather_global(m_comm, m_pr, m_pr.kv_heads, m_dkv.data() + kv_elems(), m_pos);
        }
        return validate_attention(m_comm, m_pr, m_seed, r);
    }

  private:
    std::size_t q_elems() const {
        return static_cast<std::size_t>(kernels::attention_q_elems(m_shape));
    }
    std::size_t kv_elems() const {
        return static_cast<std::size_t>(kernels::attention_kv_elems(m_shape));
    }
    // Every rank's [K | V] block, rank r's at r * 2 * kv_elems().
    std::size_t gathered_elems() const {
        return 2 * kv_elems() * static_cast<std::size_t>(m_comm.size());
    }
    double bytes_sent() const {
        // all_gather sends our block to P-1 ranks; the ring reduce-scatter P-1 partial sums.
        const double block = 2.0 * kv_elems() * sizeof(float) * (m_comm.size() - 1);
        return m_pr.backward ? 2 * block : block;
    }
    const float* block_of(const host_buffer<float>& all, int rank) const {
        return all.data() + 2 * kv_elems() * static_cast<std::size_t>(rank);
    }
    bool masked(int src) const {
        const auto& q = m_pos[static_cast<std::size_t>(m_comm.rank())];
        const auto& k = m_pos[static_cast<std::size_t>(src)];
        return kernels::classify_block(q.data(), m_shape.q_len, k.data(), m_shape.k_len,
                                       m_pr.causal) == kernels::block_mask::masked;
    }

    template <class F>
    void per_group(F&& f, comm::request* pending) const;
    void block_backward(int src, comm::request* pending);
    void forward(phase_timer& timer);
    void backward(phase_timer& timer);

    attention_problem m_pr;
    std::uint64_t m_seed;
    comm::communicator& m_comm;
    attention_shape m_shape;
    std::vector<std::vector<std::int64_t>> m_pos;
    host_buffer<float> m_q, m_o, m_lse, m_kv, m_all, m_do, m_dq, m_delta, m_dkv;
    host_buffer<float> m_dkv_local, m_dkv_send, m_dkv_recv; // ring reduce-scatter
    kernels::attention_workspace m_ws;
};

// One kernel call per (batch, kv-head group), testing `pending` in between so MPI keeps
// moving it while we compute. f(one, q_row, k_row): the group's shape and first rows.
template <class F>
void allgather_case::per_group(F&& f, comm::request* pending) const {
    const std::int64_t g = m_shape.heads / m_shape.kv_heads, n = m_shape.q_len;
    attention_shape one = m_shape;
    one.batch = 1;
    one.heads = g;
    one.kv_heads = 1;
    for (std::int64_t b = 0; b < m_shape.batch; ++b)
        for (std::int64_t kvh = 0; kvh < m_shape.kv_heads; ++kvh) {
            f(one, (b * m_shape.heads + kvh * g) * n, (b * m_shape.kv_heads + kvh) * n);
            if (pending)
                pending->test();
        }
}

void allgather_case::forward(phase_timer& timer) {
    const int p = m_comm.size(), me = m_comm.rank();
    const std::size_t kve = kv_elems();
    const std::int64_t d = m_shape.head_dim;
    const auto& q_pos = m_pos[static_cast<std::size_t>(me)];
    comm::request_ptr gather =
        m_comm.iall_gather(m_kv.data(), m_all.data(), 2 * kve, comm::dtype::f32);
    {
        // Our own block needs no communication: compute it while the gather runs.
        auto compute = timer.time(phase::compute);
        kernels::attention_fwd_init(m_shape, m_o.data(), m_lse.data());
        per_group(
            [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
                kernels::attention_fwd_cpu(one, m_q.data() + q_row * d, m_kv.data() + k_row * d,
                                           m_kv.data() + kve + k_row * d, q_pos.data(),
                                           q_pos.data(), m_o.data() + q_row * d,
                                           m_lse.data() + q_row, m_ws);
            },
            gather.get());
    }
    {
        auto wait = timer.time(phase::comm_wait);
        gather->wait();
    }
    auto compute = timer.time(phase::compute);
    for (int s = 1; s < p; ++s) {
        const int src = (me - s + p) % p;
        if (masked(src))
            continue;
        const float* block = block_of(m_all, src);
        kernels::attention_fwd_cpu(m_shape, m_q.data(), block, block + kve, q_pos.data(),
                                   m_pos[static_cast<std::size_t>(src)].data(), m_o.data(),
                                   m_lse.data(), m_ws);
    }
}

// Our queries' share of block `src`'s dK/dV into m_dkv_local (and their dQ into m_dq).
void allgather_case::block_backward(int src, comm::request* pending) {
    const std::size_t kve = kv_elems();
    const std::int64_t d = m_shape.head_dim;
    std::fill(m_dkv_local.begin(), m_dkv_local.end(), 0.0f);
    if (masked(src))
        return;
    const float* block = block_of(m_all, src);
    float* grad = m_dkv_local.data();
    const auto* q_pos = m_pos[static_cast<std::size_t>(m_comm.rank())].data();
    const auto* k_pos = m_pos[static_cast<std::size_t>(src)].data();
    per_group(
        [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
            kernels::attention_bwd_cpu(
                one, m_q.data() + q_row * d, block + k_row * d, block + kve + k_row * d,
                m_do.data() + q_row * d, m_lse.data() + q_row, m_delta.data() + q_row, q_pos, k_pos,
                m_dq.data() + q_row * d, grad + k_row * d, grad + kve + k_row * d, m_ws);
        },
        pending);
}

void allgather_case::backward(phase_timer& timer) {
    const int p = m_comm.size(), me = m_comm.rank();
    const std::size_t block_elems = 2 * kv_elems();
    {
        auto compute = timer.time(phase::compute);
        kernels::attention_bwd_delta(m_shape, m_o.data(), m_do.data(), m_delta.data());
        std::fill(m_dq.begin(), m_dq.end(), 0.0f);
    }
    // Block b's partial sum starts at rank b+1 and travels the ring to b: at step s this rank
    // adds its share of block (me-s-1) mod P to the sum arriving from prev and passes it on;
    // at the last step the block is our own and the sum is complete.
    comm::request_ptr req;
    for (int s = 0; s < p; ++s) {
        const int b = ((me - s - 1) % p + p) % p;
        {
            auto compute = timer.time(phase::compute);
            block_backward(b, req.get());
        }
        if (req) {
            auto wait = timer.time(phase::comm_wait);
            req->wait();
            req.reset();
        }
        auto compute = timer.time(phase::compute);
        float* out = s == p - 1 ? m_dkv.data() : m_dkv_send.data();
        for (std::size_t i = 0; i < block_elems; ++i)
            out[i] = m_dkv_local[i] + (s > 0 ? m_dkv_recv[i] : 0.0f);
        if (s < p - 1)
            req = m_comm.isendrecv(out, block_elems, (me + 1) % p, m_dkv_recv.data(), block_elems,
                                   (me - 1 + p) % p, comm::dtype::f32, 3);
    }
}

} // namespace

std::unique_ptr<job_case> make_allgather_case(const attention_problem& pr, run_context& ctx) {
    return std::make_unique<allgather_case>(pr, ctx);
}

} // namespace ringscale::jobs
