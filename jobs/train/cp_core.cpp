#include "jobs/train/cp_core.hpp"

#include "kernels/mask_count.hpp"

#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/layout.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace ringscale::jobs::train {

using kernels::attention_shape;

std::vector<std::vector<std::int64_t>> cp_positions(std::int64_t seq_len, int cp) {
    std::vector<std::vector<std::int64_t>> pos;
    for (int r = 0; r < cp; ++r)
        pos.push_back(cp == 1
                          ? kernels::layout_positions(kernels::layout::contiguous, seq_len, 1, 0)
                          : kernels::layout_positions(kernels::layout::zigzag, seq_len, cp, r));
    return pos;
}

namespace {

// On an executor whose attention kernels take bf16 (CUDA), Q, K|V and dO are rounded into the
// core's own buffers first, as in kernels::model::local_attention_core; on the CPU they pass as
// fp32.
class ring_core final : public kernels::model::attention_core {
  public:
    ring_core(comm::communicator& cp, kernels::executor& dev, std::int64_t seq_len) {
        for (auto& pos : cp_positions(seq_len, cp.size()))
            m_pos.emplace_back(dev, std::move(pos));
        m_spec.comm = &cp;
        m_spec.dev = &dev;
        m_spec.type = kernels::attention_supports(dev, kernels::elem::f32) ? kernels::elem::f32
                                                                           : kernels::elem::bf16;
        m_spec.positions = &m_pos;
        m_spec.overlap = true;
    }
    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer& timer) override {
        prepare(s);
        const void* qi = nullptr;
        const void* kvi = nullptr;
        {
            kernels::phase_scope compute(*m_spec.dev, timer, phase::compute);
            qi = as_input(q, ring_q_elems(m_spec), m_q);
            kvi = as_input(kv, 2 * ring_kv_elems(m_spec), m_kv);
        }
        // The ring sends our K|V at once: after the compute that produced (or rounded) it.
        order_comm_after(*m_spec.comm, *m_spec.dev, m_spec.dev->record());
        ring_forward(m_spec, qi, kvi, o, lse, m_bufs, timer);
    }
    void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                  const float* d_o, const float* lse, float* dq, float* dkv,
                  phase_timer& timer) override {
        prepare(s);
        const void* qi = nullptr;
        const void* kvi = nullptr;
        const void* doi = nullptr;
        {
            kernels::phase_scope compute(*m_spec.dev, timer, phase::compute);
            qi = as_input(q, ring_q_elems(m_spec), m_q);
            kvi = as_input(kv, 2 * ring_kv_elems(m_spec), m_kv);
            doi = as_input(d_o, ring_q_elems(m_spec), m_do);
        }
        order_comm_after(*m_spec.comm, *m_spec.dev, m_spec.dev->record());
        ring_backward(m_spec, qi, kvi, o, doi, lse, m_delta.data(), dq, dkv, m_bufs, timer);
    }

  private:
    void prepare(const attention_shape& s) {
        m_spec.shape = s;
        m_bufs.reserve(m_spec, true); // allocates only the first time
        const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
        if (m_delta.size() != rows)
            m_delta.allocate(*m_spec.dev, rows);
    }
    // `n` fp32 values as m_spec.type: `src` itself for f32, else rounded into `buf`.
    const void* as_input(const float* src, std::size_t n, kernels::dev_buffer<unsigned char>& buf) {
        if (m_spec.type == kernels::elem::f32)
            return src;
        const std::size_t bytes = n * kernels::elem_bytes(m_spec.type);
        if (buf.size() < bytes)
            buf.allocate(*m_spec.dev, bytes);
        kernels::convert(*m_spec.dev, m_spec.type, n, src, buf.data());
        return buf.data();
    }
    std::vector<kernels::dev_positions> m_pos;
    ring_spec m_spec;
    ring_buffers m_bufs;
    kernels::dev_buffer<float> m_delta;
    kernels::dev_buffer<unsigned char> m_q, m_kv, m_do;
};

// All-gather K/V, attend to each rank's block (each block's positions are sorted, the
// concatenation under zigzag is not), reduce-scatter the per-block dK/dV home.
class allgather_core final : public kernels::model::attention_core {
  public:
    allgather_core(comm::communicator& cp, std::int64_t seq_len)
        : m_cp(cp), m_pos(cp_positions(seq_len, cp.size())) {}
    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer& timer) override {
        const std::size_t block = prepare(s);
        {
            auto wait = timer.time(phase::comm_wait);
            m_cp.all_gather(kv, m_all.data(), block, comm::dtype::f32);
        }
        auto compute = timer.time(phase::compute);
        const std::int64_t kve = kernels::attention_kv_elems(s);
        kernels::cpu::attention_fwd_init(s, o, lse);
        for (int r = 0; r < m_cp.size(); ++r) {
            const float* b = m_all.data() + block * static_cast<std::size_t>(r);
            if (!masked(s, r))
                kernels::cpu::attention_fwd_cpu(s, q, b, b + kve, mine().data(),
                                                m_pos[static_cast<std::size_t>(r)].data(), o, lse,
                                                m_ws);
        }
    }
    void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                  const float* d_o, const float* lse, float* dq, float* dkv,
                  phase_timer& timer) override {
        // Every layer's forward ran since this layer's gather, so gather its K/V again
        // (as FSDP re-gathers parameters) instead of keeping L gathered copies.
        const std::size_t block = prepare(s);
        {
            auto wait = timer.time(phase::comm_wait);
            m_cp.all_gather(kv, m_all.data(), block, comm::dtype::f32);
        }
        {
            auto compute = timer.time(phase::compute);
            const std::int64_t kve = kernels::attention_kv_elems(s);
            m_delta.resize(static_cast<std::size_t>(s.batch * s.heads * s.q_len));
            m_dall.resize(m_all.size());
            kernels::cpu::attention_bwd_delta(s, o, d_o, m_delta.data());
            std::fill(dq, dq + kernels::attention_q_elems(s), 0.0f);
            std::fill(m_dall.begin(), m_dall.end(), 0.0f);
            for (int r = 0; r < m_cp.size(); ++r) {
                const std::size_t at = block * static_cast<std::size_t>(r);
                const float* b = m_all.data() + at;
                float* db = m_dall.data() + at;
                if (!masked(s, r))
                    kernels::cpu::attention_bwd_cpu(
                        s, q, b, b + kve, d_o, lse, m_delta.data(), mine().data(),
                        m_pos[static_cast<std::size_t>(r)].data(), dq, db, db + kve, m_ws);
            }
        }
        auto wait = timer.time(phase::comm_wait);
        m_cp.reduce_scatter(m_dall.data(), dkv, block, comm::dtype::f32, comm::reduce_op::sum);
    }

  private:
    std::size_t prepare(const attention_shape& s) {
        const auto block = static_cast<std::size_t>(2 * kernels::attention_kv_elems(s));
        m_all.resize(block * static_cast<std::size_t>(m_cp.size()));
        kernels::cpu::attention_workspace_reserve(m_ws);
        return block;
    }
    const std::vector<std::int64_t>& mine() const {
        return m_pos[static_cast<std::size_t>(m_cp.rank())];
    }
    bool masked(const attention_shape& s, int r) const {
        return !kernels::any_visible(s.mask, s.causal, mine().data(), s.q_len,
                                     m_pos[static_cast<std::size_t>(r)].data(), s.k_len);
    }
    comm::communicator& m_cp;
    std::vector<std::vector<std::int64_t>> m_pos;
    host_buffer<float> m_all, m_dall, m_delta;
    kernels::cpu::attention_workspace m_ws;
};

} // namespace

std::unique_ptr<kernels::model::attention_core> make_cp_core(const std::string& variant,
                                                             comm::communicator* cp,
                                                             kernels::model::train_context& ctx,
                                                             std::int64_t seq_len) {
    if (variant != "ring" && variant != "allgather" && variant != "ulysses")
        throw config_error(
            fmt::format("--cp-variant: '{}' is not one of ring, allgather, ulysses", variant));
    if (!cp || cp->size() == 1)
        return std::make_unique<kernels::model::local_attention_core>(ctx.exec(),
                                                                      cp_positions(seq_len, 1)[0]);
    kernels::executor& dev = ctx.exec();
    if (variant == "ring")
        return std::make_unique<ring_core>(*cp, dev, seq_len);
    if (dev.kind() != device_kind::cpu)
        throw config_error(cp_device_refusal(variant, dev.kind()));
    if (variant == "ulysses")
        return make_ulysses_train_core(*cp, dev, seq_len);
    return std::make_unique<allgather_core>(*cp, seq_len);
}

std::string cp_device_refusal(const std::string& variant, device_kind device) {
    return fmt::format("train_step: --cp-variant {} on --device {}: only the ring runs on a GPU "
                       "inside the training step; use --cp-variant ring or --cp 1",
                       variant, to_string(device));
}

double cp_core_floats(const std::string& variant, int cp, double tokens, double hidden) {
    if (cp == 1)
        return tokens; // delta
    if (variant == "ring")
        return 8 * tokens * hidden + tokens; // two K/V ring buffers, dK/dV local and in flight
    if (variant == "ulysses") // head-sharded Q,K,V,O,dO,dQ,dK,dV, 4-tensor staging both ways
        return 17 * tokens * hidden;
    return 4.0 * cp * tokens * hidden + tokens; // gathered K/V and per-block dK/dV
}

} // namespace ringscale::jobs::train
