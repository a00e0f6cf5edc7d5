// context_parallel --variant ulysses (DeepSpeed-Ulysses) and hybrid (2D, as in USP).
// Ulysses: one all-to-all turns sequence-sharded Q, K, V into head-sharded ones (H/u heads,
// every row of the group), attention runs locally, and an all-to-all turns O back; the
// backward does the same for dO and dQ, dK, dV. Hybrid: Ulysses inside groups of u ranks
// consecutive in cp_rank_order (by default the ranks of one node), and jobs/ring_core's ring
// across the P/u groups on the group's rows. Pure Ulysses is the case u = P: one group, no
// ring. Every rank keeps its own sequence shard (rank r: the layout's rows of r), whatever
// group it joins, so the result is validated as the other schemes are.
#include "jobs/context_parallel.hpp"
#include "jobs/schemes/ring.hpp"
#include "jobs/schemes/ulysses_exchange.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>

namespace ringscale::jobs {

namespace {

using kernels::attention_shape;

class ulysses_case final : public case_runner {
  public:
    ulysses_case(const attention_problem& pr, const cp_scheme& scheme, run_context& ctx)
        : m_pr(pr), m_seed(ctx.seed), m_world(ctx.world), m_control(ctx.control), m_dev(ctx.dev),
          m_u(scheme.ulysses_degree),
          m_order(cp_rank_order(scheme, ctx.launch.nodes, ctx.world.size())),
          m_at(comm::positions_of(m_order)[static_cast<std::size_t>(ctx.world.rank())]) {
        const int p = m_world.size();
        // Collective: every rank splits in the same order, before anything can fail. Group
        // g is positions g*u .. g*u+u-1 of m_order; ring rank g holds group g's rows.
        if (m_u < p)
            m_group = m_world.split(m_at / m_u, m_at);
        if (m_u > 1 && m_u < p)
            m_ring_comm = m_world.split(m_at % m_u, m_at);
        m_ring.comm = m_ring_comm ? m_ring_comm.get() : nullptr;
        m_ring.dev = &m_dev;
        m_ring.type = pr.type;
        m_ring.shape = pr.local_shape(p);
        m_ring.shape.heads /= m_u;
        m_ring.shape.kv_heads /= m_u;
        m_ring.shape.q_len = m_ring.shape.k_len = pr.seq_len / p * m_u;
        m_ring.positions = &m_ring_pos;
        if (m_u == 1 && p > 1) // no Ulysses exchange to speak of: the ring spans the world
            m_ring.comm = &m_world;
        m_pos = attention_positions(pr, p);
        m_ring.steps = ring_steps_needed(m_ring.shape, group_positions());
    }

    attr_map describe() const override {
        attr_map a = attention_attrs(m_pr);
        add_masked_attn_kernel(a, m_pr.mask != nullptr, m_dev.kind());
        a[schema::attr::work_imbalance] = work_imbalance(pairs_per_rank(m_pr, group_positions()));
        a[schema::attr::ulysses_degree] = static_cast<std::int64_t>(m_u);
        a[schema::attr::ring_degree] = static_cast<std::int64_t>(m_world.size() / m_u);
        a[schema::attr::comm_bytes_per_iter] = bytes_sent();
        return a;
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
    // Each Ulysses group's rows (its members' positions, sorted): the ring's ranks, and the
    // work every member of the group shares by heads.
    std::vector<std::vector<std::int64_t>> group_positions() const {
        std::vector<std::vector<std::int64_t>> out(m_pos.size() / static_cast<std::size_t>(m_u));
        for (std::size_t i = 0; i < m_pos.size(); ++i) { // group g: ranks m_order[g*u, g*u+u)
            const auto& member = m_pos[static_cast<std::size_t>(m_order[i])];
            auto& g = out[i / static_cast<std::size_t>(m_u)];
            g.insert(g.end(), member.begin(), member.end());
        }
        for (auto& g : out)
            std::sort(g.begin(), g.end());
        return out;
    }
    bool has_ring() const { return m_ring.comm != nullptr; }
    std::size_t q_elems() const { return ring_q_elems(m_ring); } // same count in both shardings
    std::size_t kv_elems() const { return ring_kv_elems(m_ring); }
    std::size_t in_bytes() const { return kernels::elem_bytes(m_pr.type); }
    // The positions of this rank's group rows, for a single-group (pure Ulysses) attention.
    kernels::row_positions group_view() const { return m_group_pos.view(); }
    // Collective over the control world: a local fp32 result, from `offset`, as a global
    // tensor of `heads` heads on the host.
    std::vector<float> gathered(const kernels::dev_buffer<float>& local, std::size_t offset,
                                std::int64_t heads);
    double bytes_sent() const;
    void attend_forward(phase_timer& timer);
    void attend_backward(phase_timer& timer);
    void forward(phase_timer& timer);
    void backward(phase_timer& timer);

    attention_problem m_pr;
    std::uint64_t m_seed;
    comm::communicator& m_world;
    comm::communicator& m_control;
    kernels::executor& m_dev;
    int m_u;
    std::vector<int> m_order; // the rank at each position; groups are cut from it
    int m_at;                 // this rank's position in m_order
    std::unique_ptr<comm::communicator> m_group, m_ring_comm;
    std::vector<std::vector<std::int64_t>> m_pos;
    std::vector<kernels::dev_positions> m_ring_pos;
    kernels::dev_positions m_group_pos;
    kernels::dev_mask m_mask;
    ulysses_layout m_lay;
    ulysses_scratch m_scratch;
    ring_spec m_ring;
    ring_buffers m_ring_bufs;
    // Sequence-sharded [B, H or Hkv, S/P, D], K|V and dK|dV in one buffer each; Q, K, V, dO
    // of the input type, the rest fp32.
    kernels::dev_buffer<unsigned char> m_q, m_kv, m_do;
    kernels::dev_buffer<float> m_o, m_dq, m_dkv;
    // Head-sharded [B, H/u or Hkv/u, group rows, D].
    kernels::dev_buffer<unsigned char> m_hq, m_hkv, m_hdo;
    kernels::dev_buffer<float> m_ho, m_hlse, m_hdq, m_hdkv, m_hdelta;
};

double ulysses_case::bytes_sent() const {
    // all_to_all sends (u-1)/u of its input: count per rank x (u-1).
    const double row =
        static_cast<double>(m_pr.batch) * (m_pr.seq_len / m_world.size()) * m_pr.head_dim;
    const double e = static_cast<double>(in_bytes()), f = sizeof(float);
    const double hq = m_pr.heads / m_u, hkv = m_pr.kv_heads / m_u;
    const double in = (hq + 2 * hkv) * row * e, out = hq * row * f; // Q,K,V in; O out
    double bytes = (in + out) * (m_u - 1);
    if (m_pr.backward) // dO in; dQ, dK, dV out
        bytes += (hq * row * e + (hq + 2 * hkv) * row * f) * (m_u - 1);
    return bytes + (has_ring() ? ring_bytes_sent(m_ring, m_pr.backward) : 0.0);
}

void ulysses_case::setup() {
    const int p = m_world.size(), rank = m_world.rank();
    // Group g holds the ranks at positions g*u .. g*u+u-1; ring rank g holds group g's rows.
    for (int g = 0; g < p / m_u; ++g) {
        std::vector<std::vector<std::int64_t>> members;
        for (int i = g * m_u; i < (g + 1) * m_u; ++i)
            members.push_back(
                m_pos[static_cast<std::size_t>(m_order[static_cast<std::size_t>(i)])]);
        auto lay = make_ulysses_layout(group(), m_dev, m_pr.batch, m_pr.head_dim, members);
        m_ring_pos.emplace_back(m_dev, lay.group_pos);
        if (g == m_at / m_u)
            m_lay = std::move(lay);
    }
    m_group_pos = kernels::dev_positions(m_dev, m_lay.group_pos);
    m_mask = kernels::dev_mask(m_dev, m_pr.mask); // the mask's arrays where kernels read them
    m_ring.shape.mask = m_mask.view();
    const auto& mine = m_pos[static_cast<std::size_t>(rank)];
    const std::size_t qe = q_elems(), kve = kv_elems(), rows = qe / m_pr.head_dim;
    std::vector<float> host(qe);
    fill_shard(tensor_id::q, m_seed, m_pr, 0, m_pr.heads, mine, host.data());
    m_q = upload_as(m_dev, m_pr.type, host);
    host.resize(2 * kve);
    fill_shard(tensor_id::k, m_seed, m_pr, 0, m_pr.kv_heads, mine, host.data());
    fill_shard(tensor_id::v, m_seed, m_pr, 0, m_pr.kv_heads, mine, host.data() + kve);
    m_kv = upload_as(m_dev, m_pr.type, host);
    m_hq.allocate(m_dev, qe * in_bytes());
    m_hkv.allocate(m_dev, 2 * kve * in_bytes());
    m_o.allocate(m_dev, qe);
    m_ho.allocate(m_dev, qe);
    m_hlse.allocate(m_dev, rows);
    if (m_pr.backward) {
        host.resize(qe);
        fill_shard(tensor_id::d_out, m_seed, m_pr, 0, m_pr.heads, mine, host.data());
        m_do = upload_as(m_dev, m_pr.type, host);
        m_hdo.allocate(m_dev, qe * in_bytes());
        m_dq.allocate(m_dev, qe);
        m_hdq.allocate(m_dev, qe);
        m_dkv.allocate(m_dev, 2 * kve);
        m_hdkv.allocate(m_dev, 2 * kve);
        m_hdelta.allocate(m_dev, rows);
    }
    // Staging for the largest exchange, allocated now so no iteration pays for it: Q, K, V
    // in, or dQ, dK, dV (fp32) out.
    const std::int64_t h = m_pr.heads, hkv = m_pr.kv_heads;
    const std::size_t e = in_bytes();
    const std::size_t staging =
        std::max(ulysses_bytes_per_rank(m_lay, {{nullptr, nullptr, h, e},
                                                {nullptr, nullptr, hkv, e},
                                                {nullptr, nullptr, hkv, e}}),
                 ulysses_bytes_per_rank(m_lay, {{nullptr, nullptr, h, sizeof(float)},
                                                {nullptr, nullptr, hkv, sizeof(float)},
                                                {nullptr, nullptr, hkv, sizeof(float)}}));
    ulysses_reserve(m_lay, staging, m_scratch);
    if (has_ring())
        m_ring_bufs.reserve(m_ring, m_pr.backward);
}

void ulysses_case::attend_forward(phase_timer& timer) {
    if (has_ring()) {
        ring_forward(m_ring, m_hq.data(), m_hkv.data(), m_ho.data(), m_hlse.data(), m_ring_bufs,
                     timer);
        return;
    }
    kernels::phase_scope compute(m_dev, timer, phase::compute);
    const std::size_t kvb = kv_elems() * in_bytes();
    kernels::attention_fwd_init(m_dev, m_ring.shape, m_ho.data(), m_hlse.data());
    kernels::attention_fwd(m_dev, m_ring.shape, m_pr.type, m_hq.data(), m_hkv.data(),
                           m_hkv.data() + kvb, group_view(), group_view(), m_ho.data(),
                           m_hlse.data(), kernels::attention_split::per_group, {});
}

void ulysses_case::attend_backward(phase_timer& timer) {
    if (has_ring()) {
        ring_backward(m_ring, m_hq.data(), m_hkv.data(), m_ho.data(), m_hdo.data(), m_hlse.data(),
                      m_hdelta.data(), m_hdq.data(), m_hdkv.data(), m_ring_bufs, timer);
        return;
    }
    kernels::phase_scope compute(m_dev, timer, phase::compute);
    const std::size_t kve = kv_elems(), kvb = kve * in_bytes();
    kernels::attention_bwd_delta(m_dev, m_ring.shape, m_pr.type, m_ho.data(), m_hdo.data(),
                                 m_hdelta.data());
    m_dev.zero(m_hdq.data(), m_hdq.bytes());
    m_dev.zero(m_hdkv.data(), m_hdkv.bytes());
    kernels::attention_bwd(m_dev, m_ring.shape, m_pr.type, m_hq.data(), m_hkv.data(),
                           m_hkv.data() + kvb, m_hdo.data(), m_hlse.data(), m_hdelta.data(),
                           group_view(), group_view(), m_hdq.data(), m_hdkv.data(),
                           m_hdkv.data() + kve, kernels::attention_split::per_group, {});
}

void ulysses_case::forward(phase_timer& timer) {
    const std::size_t e = in_bytes(), kvb = kv_elems() * e;
    const std::int64_t h = m_pr.heads, hkv = m_pr.kv_heads;
    ulysses_to_heads(m_lay,
                     {{m_q.data(), m_hq.data(), h, e},
                      {m_kv.data(), m_hkv.data(), hkv, e},
                      {m_kv.data() + kvb, m_hkv.data() + kvb, hkv, e}},
                     m_scratch, timer);
    attend_forward(timer);
    ulysses_to_sequence(m_lay, {{m_ho.data(), m_o.data(), h, sizeof(float)}}, m_scratch, timer);
}

void ulysses_case::backward(phase_timer& timer) {
    const std::size_t e = in_bytes(), f = sizeof(float), kve = kv_elems();
    const std::int64_t h = m_pr.heads, hkv = m_pr.kv_heads;
    ulysses_to_heads(m_lay, {{m_do.data(), m_hdo.data(), h, e}}, m_scratch, timer);
    attend_backward(timer);
    ulysses_to_sequence(m_lay,
                        {{m_hdq.data(), m_dq.data(), h, f},
                         {m_hdkv.data(), m_dkv.data(), hkv, f},
                         {m_hdkv.data() + kve, m_dkv.data() + kve, hkv, f}},
                        m_scratch, timer);
}

std::vector<float> ulysses_case::gathered(const kernels::dev_buffer<float>& local,
                                          std::size_t offset, std::int64_t heads) {
    const std::vector<float> host = local.download();
    return gather_global(m_control, m_pr, heads, host.data() + offset, m_pos);
}

validation ulysses_case::validate() {
    attention_result r;
    r.o = gathered(m_o, 0, m_pr.heads);
    if (m_pr.backward) {
        r.dq = gathered(m_dq, 0, m_pr.heads);
        r.dk = gathered(m_dkv, 0, m_pr.kv_heads);
        r.dv = gathered(m_dkv, kv_elems(), m_pr.kv_heads);
    }
    return validate_attention(m_control, m_pr, m_seed, r);
}

} // namespace

std::unique_ptr<case_runner> make_ulysses_case(const attention_problem& pr, const cp_scheme& scheme,
                                               run_context& ctx) {
    return std::make_unique<ulysses_case>(pr, scheme, ctx);
}

} // namespace ringscale::jobs
