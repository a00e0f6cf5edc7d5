// --cp-variant ulysses inside the training step (DeepSpeed-Ulysses): the cp group's
// sequence-sharded Q, K, V become head-sharded (H/cp heads, every row of the sequence) with
// one all-to-all, attention runs locally over the whole sequence, and O (with its LSE) goes
// back. The backward exchanges Q, K, V and dO again, with the forward's LSE and the rows'
// delta = rowsum(dO * O), instead of keeping every layer's head-sharded copies alive (the
// same memory-for-traffic choice as the all-gather core), and sends dQ, dK, dV home.
#include "jobs/train/cp_core.hpp"
#include "jobs/schemes/ulysses_exchange.hpp"

#include "kernels/cpu/attention_cpu.hpp"

#include <algorithm>

namespace ringscale::jobs::train {

namespace {

using kernels::attention_shape;

class ulysses_core final : public kernels::model::attention_core {
  public:
    ulysses_core(comm::communicator& cp, kernels::executor& dev, std::int64_t seq_len)
        : m_cp(cp), m_dev(dev), m_pos(cp_positions(seq_len, cp.size())) {}

    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer& timer) override {
        const attention_shape h = prepare(s);
        const std::size_t kve = kve_seq(s);
        ulysses_to_heads(m_lay,
                         {{q, m_hq.data(), s.heads},
                          {kv, m_hkv.data(), s.kv_heads},
                          {kv + kve, m_hkv.data() + kve, s.kv_heads}},
                         m_scratch, timer);
        {
            auto compute = timer.time(phase::compute);
            const std::int64_t* pos = m_lay.group_pos.data();
            kernels::cpu::attention_fwd_init(h, m_ho.data(), m_hlse.data());
            kernels::cpu::attention_fwd_cpu(h, m_hq.data(), m_hkv.data(), m_hkv.data() + kve, pos,
                                            pos, m_ho.data(), m_hlse.data(), m_ws);
        }
        ulysses_to_sequence(m_lay, {{m_ho.data(), o, s.heads}}, m_scratch, timer);
        ulysses_to_sequence(m_rows, {{m_hlse.data(), lse, s.heads}}, m_scratch, timer);
    }

    void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                  const float* d_o, const float* lse, float* dq, float* dkv,
                  phase_timer& timer) override {
        const attention_shape h = prepare(s);
        const std::size_t kve = kve_seq(s);
        {
            auto compute = timer.time(phase::compute);
            kernels::cpu::attention_bwd_delta(s, o, d_o, m_delta.data());
        }
        ulysses_to_heads(m_lay,
                         {{q, m_hq.data(), s.heads},
                          {kv, m_hkv.data(), s.kv_heads},
                          {kv + kve, m_hkv.data() + kve, s.kv_heads},
                          {d_o, m_hdo.data(), s.heads}},
                         m_scratch, timer);
        ulysses_to_heads(
            m_rows, {{lse, m_hlse.data(), s.heads}, {m_delta.data(), m_hdelta.data(), s.heads}},
            m_scratch, timer);
        {
            auto compute = timer.time(phase::compute);
            const std::int64_t* pos = m_lay.group_pos.data();
            std::fill(m_hdq.begin(), m_hdq.end(), 0.0f);
            std::fill(m_hdkv.begin(), m_hdkv.end(), 0.0f);
            kernels::cpu::attention_bwd_cpu(h, m_hq.data(), m_hkv.data(), m_hkv.data() + kve,
                                            m_hdo.data(), m_hlse.data(), m_hdelta.data(), pos, pos,
                                            m_hdq.data(), m_hdkv.data(), m_hdkv.data() + kve, m_ws);
        }
        ulysses_to_sequence(m_lay,
                            {{m_hdq.data(), dq, s.heads},
                             {m_hdkv.data(), dkv, s.kv_heads},
                             {m_hdkv.data() + kve, dkv + kve, s.kv_heads}},
                            m_scratch, timer);
    }

  private:
    static std::size_t kve_seq(const attention_shape& s) {
        return static_cast<std::size_t>(kernels::attention_kv_elems(s));
    }

    // Layouts and buffers for the batch of `s` (the same every call after the first); returns
    // the head-sharded shape: H/cp heads over the whole sequence.
    attention_shape prepare(const attention_shape& s) {
        const int u = m_cp.size();
        if (m_lay.comm == nullptr || m_lay.batch != s.batch || m_lay.head_dim != s.head_dim) {
            m_lay = make_ulysses_layout(m_cp, m_dev, s.batch, s.head_dim, m_pos);
            // LSE and delta: one value per row
            m_rows = make_ulysses_layout(m_cp, m_dev, s.batch, 1, m_pos);
            kernels::cpu::attention_workspace_reserve(m_ws);
        }
        attention_shape h = s;
        h.heads = s.heads / u;
        h.kv_heads = s.kv_heads / u;
        h.q_len = h.k_len = static_cast<std::int64_t>(m_lay.group_pos.size());
        const auto qe = static_cast<std::size_t>(kernels::attention_q_elems(s));
        const std::size_t rows = qe / static_cast<std::size_t>(s.head_dim);
        for (auto* b : {&m_hq, &m_ho, &m_hdo, &m_hdq})
            b->resize(qe); // the same count in both shardings
        m_hkv.resize(2 * kve_seq(s));
        m_hdkv.resize(2 * kve_seq(s));
        for (auto* b : {&m_delta, &m_hlse, &m_hdelta})
            b->resize(rows);
        return h;
    }

    comm::communicator& m_cp;
    kernels::executor& m_dev;
    std::vector<std::vector<std::int64_t>> m_pos;
    ulysses_layout m_lay, m_rows;
    ulysses_scratch m_scratch;
    kernels::cpu::attention_workspace m_ws;
    host_buffer<float> m_hq, m_hkv, m_ho, m_hdo, m_hdq, m_hdkv, m_delta, m_hlse, m_hdelta;
};

} // namespace

std::unique_ptr<kernels::model::attention_core>
make_ulysses_train_core(comm::communicator& cp, kernels::executor& dev, std::int64_t seq_len) {
    return std::make_unique<ulysses_core>(cp, dev, seq_len);
}

} // namespace ringscale::jobs::train
