// context_parallel --variant ulysses (DeepSpeed-Ulysses) and hybrid (2D, as in USP).
// Ulysses: one all-to-all turns sequence-sharded Q, K, V into head-sharded ones (H/u heads,
// every row of the group), attention runs locally, and an all-to-all turns O back; the
// backward does the same for dO and dQ, dK, dV. Hybrid: Ulysses inside groups of u
// consecutive ranks, and jobs/ring_core's ring across the P/u groups on the group's rows.
// Pure Ulysses is the case u = P: one group, no ring.
#include "jobs/context_parallel.hpp"
#include "jobs/ring_core.hpp"
#include "jobs/ulysses_exchange.hpp"

#include <algorithm>

namespace ringscale::jobs {

namespace {

using kernels::attention_shape;

class ulysses_case final : public job_case {
  public:
    ulysses_case(const attention_problem& pr, const cp_scheme& scheme, run_context& ctx)
        : m_pr(pr), m_seed(ctx.seed), m_world(ctx.world), m_u(scheme.ulysses_degree) {
        const int rank = m_world.rank(), p = m_world.size();
        // Collective: every rank splits in the same order, before anything can fail.
        if (m_u < p)
            m_group = m_world.split(rank / m_u, rank);
        if (m_u > 1 && m_u < p)
            m_ring_comm = m_world.split(rank % m_u, rank);
        m_ring.comm = m_ring_comm ? m_ring_comm.get() : nullptr;
        m_ring.shape = pr.local_shape(p);
        m_ring.shape.heads /= m_u;
        m_ring.shape.kv_heads /= m_u;
        m_ring.shape.q_len = m_ring.shape.k_len = pr.seq_len / p * m_u;
        m_ring.positions = &m_ring_pos;
        if (m_u == 1 && p > 1) // no Ulysses exchange to speak of: the ring spans the world
            m_ring.comm = &m_world;
    }

    attr_map describe() const override {
        return {{"seq_len", m_pr.seq_len},
                {"kv_heads", m_pr.kv_heads},
                {"ulysses_degree", static_cast<std::int64_t>(m_u)},
                {"ring_degree", static_cast<std::int64_t>(m_world.size() / m_u)},
                {"flops_per_iter", m_pr.flops()},
                {"comm_bytes_per_iter", bytes_sent()},
                {"flop_convention", std::string("fwd 4*B*S^2*H*D (causal /2), bwd 2.5*fwd")}};
    }

    void setup() override;
    void iterate(phase_timer& timer) override {
        forward(timer);
        if (m_pr.backward)
            backward(timer);
    }
    validation validate() override;

  private:
    comm::communicator& group() { return m_group ? *m_group : m_world; }
    bool has_ring() const { return m_ring.comm != nullptr; }
    std::size_t q_elems() const { return ring_q_elems(m_ring); } // same count in both shardings
    std::size_t kv_elems() const { return ring_kv_elems(m_ring); }
    double bytes_sent() const;
    void attend_forward(phase_timer& timer);
    void attend_backward(phase_timer& timer);
    void forward(phase_timer& timer);
    void backward(phase_timer& timer);

    attention_problem m_pr;
    std::uint64_t m_seed;
    comm::communicator& m_world;
    int m_u;
    std::unique_ptr<comm::communicator> m_group, m_ring_comm;
    std::vector<std::vector<std::int64_t>> m_pos, m_ring_pos;
    ulysses_layout m_lay;
    ulysses_scratch m_scratch;
    ring_spec m_ring;
    ring_buffers m_ring_bufs;
    kernels::attention_workspace m_ws;
    // Sequence-sharded [B, H or Hkv, S/P, D], K|V and dK|dV in one buffer each.
    host_buffer<float> m_q, m_kv, m_o, m_do, m_dq, m_dkv;
    // Head-sharded [B, H/u or Hkv/u, group rows, D].
    host_buffer<float> m_hq, m_hkv, m_ho, m_hlse, m_hdo, m_hdq, m_hdkv, m_hdelta;
};

double ulysses_case::bytes_sent() const {
    // all_to_all sends (u-1)/u of its input: count per rank x (u-1).
    const double row = static_cast<double>(m_pr.batch) * (m_pr.seq_len / m_world.size()) *
                       m_pr.head_dim * sizeof(float);
    const double hq = m_pr.heads / m_u, hkv = m_pr.kv_heads / m_u;
    const double in = (hq + 2 * hkv) * row, out = hq * row; // Q,K,V in; O out
    double bytes = (in + out) * (m_u - 1);
    if (m_pr.backward)
        bytes += (out + in) * (m_u - 1); // dO in; dQ, dK, dV out
    return bytes + (has_ring() ? ring_bytes_sent(m_ring, m_pr.backward) : 0.0);
}

void ulysses_case::setup() {
    const int p = m_world.size(), rank = m_world.rank();
    for (int r = 0; r < p; ++r)
        m_pos.push_back(kernels::layout_positions(m_pr.layout, m_pr.seq_len, p, r));
    // Group g holds ranks g*u .. g*u+u-1; ring rank g holds group g's rows.
    for (int g = 0; g < p / m_u; ++g) {
        std::vector<std::vector<std::int64_t>> members(m_pos.begin() + g * m_u,
                                                       m_pos.begin() + (g + 1) * m_u);
        auto lay = make_ulysses_layout(group(), m_pr.batch, m_pr.head_dim, members);
        m_ring_pos.push_back(lay.group_pos);
        if (g == rank / m_u)
            m_lay = std::move(lay);
    }
    const auto& mine = m_pos[static_cast<std::size_t>(rank)];
    const std::size_t qe = q_elems(), kve = kv_elems(), rows = qe / m_pr.head_dim;
    for (auto* b : {&m_q, &m_o, &m_hq, &m_ho})
        b->resize(qe);
    m_kv.resize(2 * kve);
    m_hkv.resize(2 * kve);
    m_hlse.resize(rows);
    fill_shard(tensor_id::q, m_seed, m_pr, 0, m_pr.heads, mine, m_q.data());
    fill_shard(tensor_id::k, m_seed, m_pr, 0, m_pr.kv_heads, mine, m_kv.data());
    fill_shard(tensor_id::v, m_seed, m_pr, 0, m_pr.kv_heads, mine, m_kv.data() + kve);
    if (m_pr.backward) {
        for (auto* b : {&m_do, &m_dq, &m_hdo, &m_hdq})
            b->resize(qe);
        m_dkv.resize(2 * kve);
        m_hdkv.resize(2 * kve);
        m_hdelta.resize(rows);
        fill_shard(tensor_id::d_out, m_seed, m_pr, 0, m_pr.heads, mine, m_do.data());
    }
    // Staging for the largest exchange (Q, K, V), allocated now so no iteration pays for it.
    const std::size_t staging = ulysses_count_per_rank(m_lay, {{nullptr, nullptr, m_pr.heads},
                                                               {nullptr, nullptr, m_pr.kv_heads},
                                                               {nullptr, nullptr, m_pr.kv_heads}});
    m_scratch.send.resize(staging * static_cast<std::size_t>(m_u));
    m_scratch.recv.resize(staging * static_cast<std::size_t>(m_u));
    if (has_ring())
        m_ring_bufs.reserve(m_ring, m_pr.backward);
    else
        kernels::attention_workspace_reserve(m_ws);
}

void ulysses_case::attend_forward(phase_timer& timer) {
    if (has_ring()) {
        ring_forward(m_ring, m_hq.data(), m_hkv.data(), m_ho.data(), m_hlse.data(), m_ring_bufs,
                     timer);
        return;
    }
    auto compute = timer.time(phase::compute);
    const std::int64_t* pos = m_lay.group_pos.data();
    kernels::attention_fwd_init(m_ring.shape, m_ho.data(), m_hlse.data());
    kernels::attention_fwd_cpu(m_ring.shape, m_hq.data(), m_hkv.data(), m_hkv.data() + kv_elems(),
                               pos, pos, m_ho.data(), m_hlse.data(), m_ws);
}

void ulysses_case::attend_backward(phase_timer& timer) {
    if (has_ring()) {
        ring_backward(m_ring, m_hq.data(), m_hkv.data(), m_ho.data(), m_hdo.data(), m_hlse.data(),
                      m_hdelta.data(), m_hdq.data(), m_hdkv.data(), m_ring_bufs, timer);
        return;
    }
    auto compute = timer.time(phase::compute);
    const std::int64_t* pos = m_lay.group_pos.data();
    const std::size_t kve = kv_elems();
    kernels::attention_bwd_delta(m_ring.shape, m_ho.data(), m_hdo.data(), m_hdelta.data());
    std::fill(m_hdq.begin(), m_hdq.end(), 0.0f);
    std::fill(m_hdkv.begin(), m_hdkv.end(), 0.0f);
    kernels::attention_bwd_cpu(m_ring.shape, m_hq.data(), m_hkv.data(), m_hkv.data() + kve,
                               m_hdo.data(), m_hlse.data(), m_hdelta.data(), pos, pos, m_hdq.data(),
                               m_hdkv.data(), m_hdkv.data() + kve, m_ws);
}

void ulysses_case::forward(phase_timer& timer) {
    const std::size_t kve = kv_elems();
    const std::int64_t h = m_pr.heads, hkv = m_pr.kv_heads;
    ulysses_to_heads(m_lay,
                     {{m_q.data(), m_hq.data(), h},
                      {m_kv.data(), m_hkv.data(), hkv},
                      {m_kv.data() + kve, m_hkv.data() + kve, hkv}},
                     m_scratch, timer);
    attend_forward(timer);
    ulysses_to_sequence(m_lay, {{m_ho.data(), m_o.data(), h}}, m_scratch, timer);
}

void ulysses_case::backward(phase_timer& timer) {
    const std::size_t kve = kv_elems();
    const std::int64_t h = m_pr.heads, hkv = m_pr.kv_heads;
    ulysses_to_heads(m_lay, {{m_do.data(), m_hdo.data(), h}}, m_scratch, timer);
    attend_backward(timer);
    ulysses_to_sequence(m_lay,
                        {{m_hdq.data(), m_dq.data(), h},
                         {m_hdkv.data(), m_dkv.data(), hkv},
                         {m_hdkv.data() + kve, m_dkv.data() + kve, hkv}},
                        m_scratch, timer);
}

validation ulysses_case::validate() {
    attention_result r;
    r.o = gather_global(m_world, m_pr, m_pr.heads, m_o.data(), m_pos);
    if (m_pr.backward) {
        r.dq = gather_global(m_world, m_pr, m_pr.heads, m_dq.data(), m_pos);
        r.dk = gather_global(m_world, m_pr, m_pr.kv_heads, m_dkv.data(), m_pos);
        r.dv = gather_global(m_world, m_pr, m_pr.kv_heads, m_dkv.data() + kv_elems(), m_pos);
    }
    return validate_attention(m_world, m_pr, m_seed, r);
}

} // namespace

std::unique_ptr<job_case> make_ulysses_case(const attention_problem& pr, const cp_scheme& scheme,
                                            run_context& ctx) {
    return std::make_unique<ulysses_case>(pr, scheme, ctx);
}

} // namespace ringscale::jobs
