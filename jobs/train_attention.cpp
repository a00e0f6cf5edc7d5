#include "jobs/train_attention.hpp"

#include "jobs/schemes/cp_attention.hpp"
#include "jobs/schemes/device_exchange.hpp"
#include "kernels/layout.hpp"

namespace ringscale::jobs {

std::vector<std::vector<std::int64_t>> train_cp_positions(std::int64_t seq_len, int cp) {
    std::vector<std::vector<std::int64_t>> pos;
    for (int r = 0; r < cp; ++r)
        pos.push_back(cp == 1
                          ? kernels::layout_positions(kernels::layout::contiguous, seq_len, 1, 0)
                          : kernels::layout_positions(kernels::layout::zigzag, seq_len, cp, r));
    return pos;
}

namespace {

using kernels::attention_shape;
using kernels::model::attention_input;

// A scheme as the model's attention core: the inputs in the kernels' type, then the scheme.
class scheme_core final : public kernels::model::attention_core {
  public:
    scheme_core(std::unique_ptr<schemes::cp_attention> scheme, comm::communicator& cp,
                kernels::executor& dev, kernels::elem type)
        : m_scheme(std::move(scheme)), m_cp(cp), m_dev(dev), m_type(type) {}

    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer& timer) override {
        m_scheme->prepare(s, true); // allocates only the first time
        const void* qi = nullptr;
        const void* kvi = nullptr;
        {
            kernels::phase_scope compute(m_dev, timer, phase::compute);
            qi = attention_input(m_dev, m_type, q, q_elems(s), m_q);
            kvi = attention_input(m_dev, m_type, kv, 2 * kv_elems(s), m_kv);
        }
        // The scheme may send our K|V at once: after the compute that produced (or rounded) it.
        schemes::order_comm_after(m_cp, m_dev, m_dev.record());
        m_scheme->forward(qi, kvi, o, lse, timer);
    }
    void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                  const float* d_o, const float* lse, float* dq, float* dkv,
                  phase_timer& timer) override {
        m_scheme->prepare(s, true);
        const void* qi = nullptr;
        const void* kvi = nullptr;
        const void* doi = nullptr;
        {
            kernels::phase_scope compute(m_dev, timer, phase::compute);
            qi = attention_input(m_dev, m_type, q, q_elems(s), m_q);
            kvi = attention_input(m_dev, m_type, kv, 2 * kv_elems(s), m_kv);
            doi = attention_input(m_dev, m_type, d_o, q_elems(s), m_do);
        }
        schemes::order_comm_after(m_cp, m_dev, m_dev.record());
        m_scheme->backward(qi, kvi, o, doi, lse, dq, dkv, timer);
    }

  private:
    static std::size_t q_elems(const attention_shape& s) {
        return static_cast<std::size_t>(kernels::attention_q_elems(s));
    }
    static std::size_t kv_elems(const attention_shape& s) {
        return static_cast<std::size_t>(kernels::attention_kv_elems(s));
    }

    std::unique_ptr<schemes::cp_attention> m_scheme;
    comm::communicator& m_cp;
    kernels::executor& m_dev;
    kernels::elem m_type;
    kernels::dev_buffer<unsigned char> m_q, m_kv, m_do; // rounded inputs (bf16 on CUDA)
};

} // namespace

std::unique_ptr<kernels::model::attention_core>
make_train_attention(const std::string& variant, int ulysses_degree, comm::communicator* cp,
                     kernels::model::train_context& ctx, const attention_shape& local,
                     std::int64_t seq_len) {
    kernels::executor& dev = ctx.exec();
    if (!cp || cp->size() == 1)
        return std::make_unique<kernels::model::local_attention_core>(
            dev, train_cp_positions(seq_len, 1)[0]);
    schemes::cp_config c;
    c.variant = variant;
    c.ulysses_degree = ulysses_degree;
    c.type = kernels::model::attention_input_type(dev);
    c.keep_forward = false;
    auto scheme =
        schemes::make_cp_attention(c, *cp, dev, local, train_cp_positions(seq_len, cp->size()));
    return std::make_unique<scheme_core>(std::move(scheme), *cp, dev, c.type);
}

double train_cp_floats(const std::string& variant, int cp, int ulysses_degree, double tokens,
                       const kernels::model::model_config& m) {
    const double t = tokens, h = static_cast<double>(m.hidden);
    const double kv = static_cast<double>(m.kv_width()); // K and V each (GQA: fewer heads)
    if (cp == 1)
        return t; // delta
    // Two K/V ring buffers, dK/dV local and in flight; delta.
    const double ring = 8 * t * kv + t;
    // Head-sharded Q, K, V, O, dO, dQ, dK, dV and 4-tensor staging both ways (counted at
    // full width: the staging mixes Q's and K/V's heads).
    const double ulysses = 17 * t * h;
    if (variant == "ring")
        return ring;
    if (variant == "ulysses")
        return ulysses;
    if (variant == "hybrid") // the ring's buffers hold the group's rows at 1/u of the heads
        return ulysses + (ulysses_degree < cp ? ring : 0);
    return 2.0 * cp * t * kv + 6 * t * kv + t; // gathered K/V; dK/dV local, sent, received; delta
}

} // namespace ringscale::jobs
