// The Ulysses scheme (DeepSpeed-Ulysses) and the hybrid (2D, as in USP). Ulysses: one
// all-to-all turns sequence-sharded Q, K, V into head-sharded ones (H/u heads, every row of the
// group), attention runs locally, and an all-to-all turns O back; the backward does the same
// for dO and dQ, dK, dV. Hybrid: Ulysses inside groups of u ranks consecutive in the order
// (by default the ranks of one node), and the ring (schemes/ring.hpp) across the P/u groups on
// the group's rows. Pure Ulysses is the case u = P: one group, no ring. Every rank keeps its
// own sequence shard whatever group it joins.
//
// With keep_forward the backward reuses the head-sharded Q, K, V, O and LSE of the forward and
// exchanges dO alone. Without it (the training step) the forward also sends the LSE home, and
// the backward exchanges Q, K, V and dO again with the LSE and the rows' delta =
// rowsum(dO * O), instead of keeping every layer's head-sharded copies alive (the same
// memory-for-traffic choice as the all-gather scheme's second gather).
#include "comm/topology.hpp"
#include "jobs/schemes/cp_attention.hpp"
#include "jobs/schemes/device_exchange.hpp"
#include "jobs/schemes/ring.hpp"
#include "jobs/schemes/ulysses_exchange.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>

namespace ringscale::jobs::schemes {

namespace {

using kernels::attention_shape;
using kernels::phase_scope;

std::vector<int> rank_order(int ranks) {
    std::vector<int> order(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r)
        order[static_cast<std::size_t>(r)] = r;
    return order;
}

class ulysses_attention final : public cp_attention {
  public:
    ulysses_attention(const cp_config& c, comm::communicator& comm, kernels::executor& dev,
                      const attention_shape& local, std::vector<std::vector<std::int64_t>> pos)
        : m_comm(comm), m_dev(dev), m_type(c.type), m_keep(c.keep_forward), m_u(c.ulysses_degree),
          m_order(c.order.empty() ? rank_order(comm.size()) : c.order),
          m_at(comm::positions_of(m_order)[static_cast<std::size_t>(comm.rank())]), m_local(local),
          m_pos(std::move(pos)) {
        const int p = comm.size();
        // Collective: every rank splits in the same order, before anything can fail. Group g
        // is positions g*u .. g*u+u-1 of m_order; ring rank g holds group g's rows.
        if (m_u < p)
            m_group = comm.split(m_at / m_u, m_at);
        if (m_u < p && (m_u > 1 || m_order != rank_order(p)))
            m_ring_comm = comm.split(m_at % m_u, m_at);
        // u = 1 in rank order: no Ulysses exchange to speak of, the ring spans every rank.
        m_ring.comm = m_ring_comm ? m_ring_comm.get() : (m_u < p ? &comm : nullptr);
        m_ring.dev = &dev;
        m_ring.type = c.type;
        m_ring.overlap = c.overlap;
        m_ring.merge_in_dtype = c.merge_in_dtype;
        m_ring.shape = head_shape(local);
        m_ring.positions = &m_ring_pos;
        m_ring.steps = ring_steps_needed(m_ring.shape, work_positions());
    }

    void prepare(const attention_shape& s, bool backward) override;
    void forward(const void* q, const void* kv, float* o, float* lse, phase_timer& timer) override;
    void backward(const void* q, const void* kv, const float* o, const void* d_o, const float* lse,
                  float* dq, float* dkv, phase_timer& timer) override;
    double bytes_sent(bool backward) const override;

    // Each Ulysses group's rows (its members' positions, sorted): the ring's ranks, and the
    // work every member of the group shares by heads.
    std::vector<std::vector<std::int64_t>> work_positions() const override {
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
    void describe(results::attr_map& a) const override {
        a[schema::attr::ulysses_degree] = static_cast<std::int64_t>(m_u);
        a[schema::attr::ring_degree] = static_cast<std::int64_t>(m_comm.size() / m_u);
    }

  private:
    // Head-sharded: H/u heads over every row of the group.
    attention_shape head_shape(const attention_shape& s) const {
        attention_shape h = s;
        h.heads /= m_u;
        h.kv_heads /= m_u;
        h.q_len = h.k_len = s.q_len * m_u;
        return h;
    }
    comm::communicator& group() { return m_group ? *m_group : m_comm; }
    bool has_ring() const { return m_ring.comm != nullptr; }
    std::size_t q_elems() const { return ring_q_elems(m_ring); } // same in both shardings
    std::size_t kv_elems() const { return ring_kv_elems(m_ring); }
    std::size_t in_bytes() const { return kernels::elem_bytes(m_type); }
    void make_layouts(const attention_shape& s);
    void reserve_staging(bool backward);
    // The ring sends the head-sharded Q, K, V (and dO) the exchange has just unpacked on the
    // compute stream, and its first send waits for nothing (a scheme's caller orders its
    // inputs, schemes/cp_attention.hpp): order the ring's communicator after that unpacking.
    // Without it, on CUDA the ring sent blocks still being written (GPU run, 2026-11-30).
    void order_ring_after_compute() { order_comm_after(*m_ring.comm, m_dev, m_dev.record()); }
    void attend_forward(phase_timer& timer);
    void attend_backward(bool delta_ready, phase_timer& timer);

    comm::communicator& m_comm;
    kernels::executor& m_dev;
    kernels::elem m_type;
    bool m_keep;
    int m_u;
    std::vector<int> m_order; // the rank at each position; groups are cut from it
    int m_at;                 // this rank's position in m_order
    attention_shape m_local;
    std::vector<std::vector<std::int64_t>> m_pos;
    std::unique_ptr<comm::communicator> m_group, m_ring_comm;
    std::vector<kernels::dev_positions> m_ring_pos;
    kernels::dev_positions m_group_pos;
    ulysses_layout m_lay, m_rows; // m_rows: one value per row (LSE, delta)
    ulysses_scratch m_scratch;
    ring_spec m_ring;
    ring_buffers m_ring_bufs;
    // Head-sharded [B, H/u or Hkv/u, group rows, D]: Q, K|V, dO of m_type, the rest fp32;
    // m_delta: the sequence-sharded delta a backward without keep_forward sends.
    kernels::dev_buffer<unsigned char> m_hq, m_hkv, m_hdo;
    kernels::dev_buffer<float> m_ho, m_hlse, m_hdq, m_hdkv, m_hdelta, m_delta;
};

void ulysses_attention::make_layouts(const attention_shape& s) {
    const auto groups = work_positions();
    m_ring_pos.clear();
    for (const auto& g : groups)
        m_ring_pos.emplace_back(m_dev, g);
    std::vector<std::vector<std::int64_t>> members;
    const int first = m_at / m_u * m_u;
    for (int i = first; i < first + m_u; ++i)
        members.push_back(m_pos[static_cast<std::size_t>(m_order[static_cast<std::size_t>(i)])]);
    m_lay = make_ulysses_layout(group(), m_dev, s.batch, s.head_dim, members);
    m_rows = make_ulysses_layout(group(), m_dev, s.batch, 1, members);
    m_group_pos = kernels::dev_positions(m_dev, m_lay.group_pos);
}

// Staging for the largest exchange, allocated now so no iteration pays for it: Q, K, V (and
// dO) in, or dQ, dK, dV (fp32) out.
void ulysses_attention::reserve_staging(bool backward) {
    const std::int64_t h = m_local.heads, hkv = m_local.kv_heads;
    const std::size_t e = in_bytes(), f = sizeof(float);
    std::vector<ulysses_tensor> in = {
        {nullptr, nullptr, h, e}, {nullptr, nullptr, hkv, e}, {nullptr, nullptr, hkv, e}};
    if (backward && !m_keep)
        in.push_back({nullptr, nullptr, h, e});
    std::size_t bytes = ulysses_bytes_per_rank(m_lay, in);
    if (backward)
        bytes = std::max(bytes, ulysses_bytes_per_rank(m_lay, {{nullptr, nullptr, h, f},
                                                               {nullptr, nullptr, hkv, f},
                                                               {nullptr, nullptr, hkv, f}}));
    ulysses_reserve(m_lay, bytes, m_scratch);
}

void ulysses_attention::prepare(const attention_shape& s, bool backward) {
    m_local = s;
    m_ring.shape = head_shape(s);
    if (m_lay.comm == nullptr || m_lay.batch != s.batch || m_lay.head_dim != s.head_dim)
        make_layouts(s);
    auto fit = [this](auto& b, std::size_t n) {
        if (b.size() != n)
            b.allocate(m_dev, n);
    };
    const std::size_t qe = q_elems(), kve = kv_elems(), rows = qe / s.head_dim;
    fit(m_hq, qe * in_bytes());
    fit(m_hkv, 2 * kve * in_bytes());
    fit(m_ho, qe);
    fit(m_hlse, rows);
    if (backward) {
        fit(m_hdo, qe * in_bytes());
        fit(m_hdq, qe);
        fit(m_hdkv, 2 * kve);
        fit(m_hdelta, rows);
        if (!m_keep)
            fit(m_delta, rows);
    }
    reserve_staging(backward);
    if (has_ring())
        m_ring_bufs.reserve(m_ring, backward);
}

double ulysses_attention::bytes_sent(bool backward) const {
    // all_to_all sends (u-1)/u of its input: count per rank x (u-1).
    const double rows = static_cast<double>(m_local.batch * m_local.q_len);
    const double row = rows * m_local.head_dim;
    const double e = static_cast<double>(in_bytes()), f = sizeof(float);
    const double hq = m_local.heads / m_u, hkv = m_local.kv_heads / m_u;
    const double qkv = (hq + 2 * hkv) * row;
    double bytes = qkv * e + hq * row * f; // Q, K, V in; O out
    if (!m_keep)
        bytes += hq * rows * f; // the LSE out
    if (backward && m_keep)     // dO in; dQ, dK, dV out
        bytes += hq * row * e + qkv * f;
    else if (backward) // Q, K, V, dO in with the LSE and delta; dQ, dK, dV out
        bytes += (qkv + hq * row) * e + 2 * hq * rows * f + qkv * f;
    bytes *= m_u - 1;
    return bytes + (has_ring() ? ring_bytes_sent(m_ring, backward) : 0.0);
}

void ulysses_attention::attend_forward(phase_timer& timer) {
    if (has_ring()) {
        order_ring_after_compute();
        ring_forward(m_ring, m_hq.data(), m_hkv.data(), m_ho.data(), m_hlse.data(), m_ring_bufs,
                     timer);
        return;
    }
    phase_scope compute(m_dev, timer, phase::compute);
    const std::size_t kvb = kv_elems() * in_bytes();
    const kernels::row_positions all = m_group_pos.view();
    kernels::attention_fwd_init(m_dev, m_ring.shape, m_ho.data(), m_hlse.data());
    kernels::attention_fwd(m_dev, m_ring.shape, m_type, m_hq.data(), m_hkv.data(),
                           m_hkv.data() + kvb, all, all, m_ho.data(), m_hlse.data(),
                           kernels::attention_split::whole, {});
    if (m_ring.merge_in_dtype) // one block: O stored in the dtype once, as on one rank
        kernels::round_values(m_dev, m_type, ring_q_elems(m_ring), m_ho.data());
}

// `delta_ready`: m_hdelta came with the exchange; else it is computed from O and dO.
void ulysses_attention::attend_backward(bool delta_ready, phase_timer& timer) {
    if (has_ring()) {
        order_ring_after_compute();
        ring_backward(m_ring, m_hq.data(), m_hkv.data(), delta_ready ? nullptr : m_ho.data(),
                      m_hdo.data(), m_hlse.data(), m_hdelta.data(), m_hdq.data(), m_hdkv.data(),
                      m_ring_bufs, timer);
        return;
    }
    phase_scope compute(m_dev, timer, phase::compute);
    const std::size_t kve = kv_elems(), kvb = kve * in_bytes();
    const kernels::row_positions all = m_group_pos.view();
    if (!delta_ready)
        kernels::attention_bwd_delta(m_dev, m_ring.shape, m_type, m_ho.data(), m_hdo.data(),
                                     m_hdelta.data());
    m_dev.zero(m_hdq.data(), m_hdq.bytes());
    m_dev.zero(m_hdkv.data(), m_hdkv.bytes());
    kernels::attention_bwd(m_dev, m_ring.shape, m_type, m_hq.data(), m_hkv.data(),
                           m_hkv.data() + kvb, m_hdo.data(), m_hlse.data(), m_hdelta.data(), all,
                           all, m_hdq.data(), m_hdkv.data(), m_hdkv.data() + kve,
                           kernels::attention_split::whole, {});
}

void ulysses_attention::forward(const void* q, const void* kv, float* o, float* lse,
                                phase_timer& timer) {
    const std::size_t e = in_bytes(), kvb = kv_elems() * e;
    const std::int64_t h = m_local.heads, hkv = m_local.kv_heads;
    const auto* k = static_cast<const unsigned char*>(kv);
    ulysses_to_heads(
        m_lay,
        {{q, m_hq.data(), h, e}, {k, m_hkv.data(), hkv, e}, {k + kvb, m_hkv.data() + kvb, hkv, e}},
        m_scratch, timer);
    attend_forward(timer);
    ulysses_to_sequence(m_lay, {{m_ho.data(), o, h, sizeof(float)}}, m_scratch, timer);
    if (lse)
        ulysses_to_sequence(m_rows, {{m_hlse.data(), lse, h, sizeof(float)}}, m_scratch, timer);
}

void ulysses_attention::backward(const void* q, const void* kv, const float* o, const void* d_o,
                                 const float* lse, float* dq, float* dkv, phase_timer& timer) {
    const std::size_t e = in_bytes(), f = sizeof(float), kve = kv_elems(), kvb = kve * e;
    const std::int64_t h = m_local.heads, hkv = m_local.kv_heads;
    if (m_keep) {
        ulysses_to_heads(m_lay, {{d_o, m_hdo.data(), h, e}}, m_scratch, timer);
    } else {
        {
            phase_scope compute(m_dev, timer, phase::compute);
            kernels::attention_bwd_delta(m_dev, m_local, m_type, o, d_o, m_delta.data());
        }
        const auto* k = static_cast<const unsigned char*>(kv);
        ulysses_to_heads(m_lay,
                         {{q, m_hq.data(), h, e},
                          {k, m_hkv.data(), hkv, e},
                          {k + kvb, m_hkv.data() + kvb, hkv, e},
                          {d_o, m_hdo.data(), h, e}},
                         m_scratch, timer);
        ulysses_to_heads(m_rows,
                         {{lse, m_hlse.data(), h, f}, {m_delta.data(), m_hdelta.data(), h, f}},
                         m_scratch, timer);
    }
    attend_backward(!m_keep, timer);
    ulysses_to_sequence(m_lay,
                        {{m_hdq.data(), dq, h, f},
                         {m_hdkv.data(), dkv, hkv, f},
                         {m_hdkv.data() + kve, dkv + kve, hkv, f}},
                        m_scratch, timer);
}

} // namespace

std::unique_ptr<cp_attention> make_ulysses_attention(const cp_config& c, comm::communicator& comm,
                                                     kernels::executor& dev,
                                                     const attention_shape& local,
                                                     std::vector<std::vector<std::int64_t>> pos) {
    return std::make_unique<ulysses_attention>(c, comm, dev, local, std::move(pos));
}

} // namespace ringscale::jobs::schemes
