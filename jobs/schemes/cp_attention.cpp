// The ring as a scheme (its algorithm is schemes/ring.cpp), and the choice of a scheme.
#include "jobs/schemes/cp_attention.hpp"
#include "jobs/schemes/ring.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::jobs::schemes {

namespace {

class ring_attention final : public cp_attention {
  public:
    ring_attention(const cp_config& c, comm::communicator& comm, kernels::executor& dev,
                   const kernels::attention_shape& local,
                   std::vector<std::vector<std::int64_t>> positions)
        : m_keep(c.keep_forward), m_host_pos(std::move(positions)) {
        m_spec.comm = &comm;
        m_spec.dev = &dev;
        m_spec.type = c.type;
        m_spec.shape = local;
        m_spec.positions = &m_pos;
        m_spec.overlap = c.overlap;
        m_spec.steps = ring_steps_needed(local, m_host_pos);
    }

    void prepare(const kernels::attention_shape& s, bool backward) override {
        m_spec.shape = s;
        if (m_pos.empty())
            for (const auto& p : m_host_pos)
                m_pos.emplace_back(*m_spec.dev, p);
        m_bufs.reserve(m_spec, backward);
        const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
        for (auto* b : {backward ? &m_delta : nullptr, m_keep ? &m_lse : nullptr})
            if (b && b->size() != rows)
                b->allocate(*m_spec.dev, rows);
    }
    void forward(const void* q, const void* kv, float* o, float* lse, phase_timer& timer) override {
        ring_forward(m_spec, q, kv, o, lse ? lse : m_lse.data(), m_bufs, timer);
    }
    void backward(const void* q, const void* kv, const float* o, const void* d_o, const float* lse,
                  float* dq, float* dkv, phase_timer& timer) override {
        ring_backward(m_spec, q, kv, o, d_o, lse ? lse : m_lse.data(), m_delta.data(), dq, dkv,
                      m_bufs, timer);
    }
    double bytes_sent(bool backward) const override { return ring_bytes_sent(m_spec, backward); }
    std::vector<std::vector<std::int64_t>> work_positions() const override { return m_host_pos; }
    void describe(results::attr_map&) const override {}

  private:
    bool m_keep;
    std::vector<std::vector<std::int64_t>> m_host_pos;
    std::vector<kernels::dev_positions> m_pos;
    ring_spec m_spec;
    ring_buffers m_bufs;
    kernels::dev_buffer<float> m_delta, m_lse; // m_lse: when the caller keeps none
};

} // namespace

std::unique_ptr<cp_attention> make_cp_attention(const cp_config& c, comm::communicator& comm,
                                                kernels::executor& dev,
                                                const kernels::attention_shape& local,
                                                std::vector<std::vector<std::int64_t>> positions) {
    if (c.variant == "ring")
        return std::make_unique<ring_attention>(c, comm, dev, local, std::move(positions));
    if (c.variant == "allgather")
        return make_allgather_attention(c, comm, dev, local, std::move(positions));
    if (c.variant == "ulysses" || c.variant == "hybrid") {
        cp_config u = c;
        if (c.variant == "ulysses")
            u.ulysses_degree = comm.size();
        return make_ulysses_attention(u, comm, dev, local, std::move(positions));
    }
    throw config_error(fmt::format("context-parallel scheme '{}' is not one of ring, allgather, "
                                   "ulysses, hybrid",
                                   c.variant));
}

} // namespace ringscale::jobs::schemes
