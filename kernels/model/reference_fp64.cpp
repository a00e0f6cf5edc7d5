// The fp64 reference's model on one sequence and its training loop. The forward and backward
// follow kernels/model/transformer_block.cpp operation for operation (same order, same saved
// activations), every value in double and no rounding to a training dtype.
#include "kernels/model/reference_fp64.hpp"

#include "kernels/model/reference_fp64_ops.hpp"
#include "kernels/model/reference_train.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace ringscale::kernels::model {

namespace {

using vec = std::vector<double>;

// One block's saved forward activations, token-major.
struct block_acts {
    vec x, xn1, inv1, qkv, att, xmid, xn2, inv2, h1, g;
};

// y[k] = a[k] + b[k] for k < n.
void add(std::size_t n, const double* a, const double* b, double* y) {
    for (std::size_t k = 0; k < n; ++k)
        y[k] = a[k] + b[k];
}

// The model on one sequence of `rows` tokens.
class fp64_model {
  public:
    fp64_model(const model_config& cfg, std::int64_t rows, const mask_view& mask);
    /// The sequence's share of the loss (Σ CE / total_tokens); keeps what backward needs.
    double forward(const double* p, const std::int32_t* ids, const std::int32_t* targets,
                   std::size_t total_tokens);
    /// ACCUMULATES the sequence's gradient into g [total].
    void backward(const double* p, double* g);

  private:
    void block_fwd(std::size_t l, const double* p, double* x_out);
    void block_bwd(std::size_t l, const double* p, double* g, double* dx);

    model_config m_cfg;
    param_layout m_layout;
    std::size_t m_t, m_h, m_v;
    std::size_t m_q = 0, m_up = 0, m_f = 0; // QKV outputs, MLP up outputs, MLP width
    fp64::attention_geometry m_geo;
    std::vector<block_acts> m_act;
    vec m_xlast, m_xf, m_invf, m_logits; // head; the logits become dlogits in forward
    vec m_dx, m_tmp, m_dmid, m_datt, m_dqkv, m_dg, m_dact;
    const std::int32_t* m_ids = nullptr;
};

fp64_model::fp64_model(const model_config& cfg, std::int64_t rows, const mask_view& mask)
    : m_cfg(cfg), m_layout(cfg), m_t(static_cast<std::size_t>(rows)),
      m_h(static_cast<std::size_t>(cfg.hidden)), m_v(static_cast<std::size_t>(cfg.vocab)) {
    m_geo.rows = m_t;
    m_geo.heads = static_cast<std::size_t>(cfg.heads);
    m_geo.head_dim = static_cast<std::size_t>(cfg.head_dim());
    m_geo.kv_heads = static_cast<std::size_t>(cfg.kv_count());
    m_geo.mask = mask;
    const std::size_t th = m_t * m_h;
    m_q = static_cast<std::size_t>(cfg.qkv_width());
    m_up = static_cast<std::size_t>(cfg.ffn_up());
    m_f = static_cast<std::size_t>(cfg.ffn_width());
    m_act.resize(static_cast<std::size_t>(cfg.layers));
    for (block_acts& a : m_act) {
        for (vec* b : {&a.x, &a.xn1, &a.att, &a.xmid, &a.xn2})
            b->resize(th);
        a.qkv.resize(m_t * m_q);
        a.h1.resize(m_t * m_up);
        a.g.resize(m_t * m_f);
        a.inv1.resize(m_t);
        a.inv2.resize(m_t);
    }
    for (vec* b : {&m_xlast, &m_xf, &m_dx, &m_tmp, &m_dmid, &m_datt})
        b->resize(th);
    m_invf.resize(m_t);
    m_logits.resize(m_t * m_v);
    m_dqkv.resize(m_t * m_q);
    m_dg.resize(m_t * m_up);
    m_dact.resize(m_t * m_f);
}

double fp64_model::forward(const double* p, const std::int32_t* ids, const std::int32_t* targets,
                           std::size_t total_tokens) {
    m_ids = ids;
    double* x0 = m_act.empty() ? m_xlast.data() : m_act[0].x.data();
    for (std::size_t r = 0; r < m_t; ++r) // embedding (unit 0)
        std::copy_n(p + static_cast<std::size_t>(ids[r]) * m_h, m_h, x0 + r * m_h);
    for (std::size_t l = 0; l < m_act.size(); ++l)
        block_fwd(l, p + m_layout.unit(static_cast<int>(l) + 1).offset,
                  l + 1 < m_act.size() ? m_act[l + 1].x.data() : m_xlast.data());
    const head_offsets& o = m_layout.head();
    const double* ph = p + m_layout.unit(m_layout.head_unit()).offset;
    fp64::rmsnorm_fwd(m_t, m_h, m_cfg.eps, m_xlast.data(), ph + o.norm, m_xf.data(), m_invf.data());
    fp64::linear_fwd(m_t, m_h, m_v, m_xf.data(), ph + o.wout, ph + o.bout, m_logits.data());
    return fp64::cross_entropy_fwd_bwd(m_t, m_v, total_tokens, m_logits.data(), targets,
                                       m_logits.data());
}

void fp64_model::backward(const double* p, double* g) {
    const head_offsets& o = m_layout.head();
    const std::size_t head = m_layout.unit(m_layout.head_unit()).offset;
    fp64::linear_bwd(m_t, m_h, m_v, m_xf.data(), p + head + o.wout, m_logits.data(), m_tmp.data(),
                     g + head + o.wout, g + head + o.bout);
    fp64::rmsnorm_bwd(m_t, m_h, m_xlast.data(), p + head + o.norm, m_invf.data(), m_tmp.data(),
                      m_dx.data(), g + head + o.norm);
    for (std::size_t l = m_act.size(); l-- > 0;) {
        const std::size_t at = m_layout.unit(static_cast<int>(l) + 1).offset;
        block_bwd(l, p + at, g + at, m_dx.data());
    }
    for (std::size_t r = 0; r < m_t; ++r) { // embedding: dtable[id] += dx
        double* row = g + static_cast<std::size_t>(m_ids[r]) * m_h;
        for (std::size_t j = 0; j < m_h; ++j)
            row[j] += m_dx[r * m_h + j];
    }
}

void fp64_model::block_fwd(std::size_t l, const double* p, double* x_out) {
    const std::size_t t = m_t, h = m_h;
    const block_offsets& o = m_layout.block();
    block_acts& a = m_act[l];
    fp64::rmsnorm_fwd(t, h, m_cfg.eps, a.x.data(), p + o.norm1, a.xn1.data(), a.inv1.data());
    fp64::linear_fwd(t, h, m_q, a.xn1.data(), p + o.wqkv, nullptr, a.qkv.data());
    fp64::attention_fwd(m_geo, a.qkv.data(), a.att.data());
    fp64::linear_fwd(t, h, h, a.att.data(), p + o.wo, p + o.bo, m_tmp.data());
    add(t * h, a.x.data(), m_tmp.data(), a.xmid.data());
    fp64::rmsnorm_fwd(t, h, m_cfg.eps, a.xmid.data(), p + o.norm2, a.xn2.data(), a.inv2.data());
    fp64::linear_fwd(t, h, m_up, a.xn2.data(), p + o.w1, p + o.b1, a.h1.data());
    if (m_cfg.mlp == mlp_kind::swiglu)
        fp64::swiglu_fwd(t, m_f, a.h1.data(), a.g.data());
    else
        fp64::gelu_fwd(t * m_f, a.h1.data(), a.g.data());
    fp64::linear_fwd(t, m_f, h, a.g.data(), p + o.w2, p + o.b2, m_tmp.data());
    add(t * h, a.xmid.data(), m_tmp.data(), x_out);
}

// dx: in, dL/d(block output); out, dL/d(block input).
void fp64_model::block_bwd(std::size_t l, const double* p, double* g, double* dx) {
    const std::size_t t = m_t, h = m_h;
    const block_offsets& o = m_layout.block();
    block_acts& a = m_act[l];
    // MLP: x_out = xmid + W2·act(W1·norm2(xmid) + b1) + b2.
    if (m_cfg.mlp == mlp_kind::swiglu) {
        fp64::linear_bwd(t, m_f, h, a.g.data(), p + o.w2, dx, m_dact.data(), g + o.w2, g + o.b2);
        fp64::swiglu_bwd(t, m_f, a.h1.data(), m_dact.data(), m_dg.data());
    } else {
        fp64::linear_bwd(t, m_f, h, a.g.data(), p + o.w2, dx, m_dg.data(), g + o.w2, g + o.b2);
        fp64::gelu_bwd(t * m_f, a.h1.data(), m_dg.data(), m_dg.data());
    }
    fp64::linear_bwd(t, h, m_up, a.xn2.data(), p + o.w1, m_dg.data(), m_tmp.data(), g + o.w1,
                     g + o.b1);
    fp64::rmsnorm_bwd(t, h, a.xmid.data(), p + o.norm2, a.inv2.data(), m_tmp.data(), m_tmp.data(),
                      g + o.norm2);
    add(t * h, dx, m_tmp.data(), m_dmid.data());
    // Attention: xmid = x + Wo·attn(norm1(x)·Wqkvᵀ) + bo.
    fp64::linear_bwd(t, h, h, a.att.data(), p + o.wo, m_dmid.data(), m_datt.data(), g + o.wo,
                     g + o.bo);
    fp64::attention_bwd(m_geo, a.qkv.data(), a.att.data(), m_datt.data(), m_dqkv.data());
    fp64::linear_bwd(t, h, m_q, a.xn1.data(), p + o.wqkv, m_dqkv.data(), m_tmp.data(), g + o.wqkv,
                     nullptr);
    fp64::rmsnorm_bwd(t, h, a.x.data(), p + o.norm1, a.inv1.data(), m_tmp.data(), m_tmp.data(),
                      g + o.norm1);
    add(t * h, m_dmid.data(), m_tmp.data(), dx);
}

void check_sizes(const model_config& cfg, std::int64_t sequences, std::int64_t seq_len, int steps) {
    model_check(cfg);
    RINGSCALE_REQUIRE(sequences > 0 && seq_len > 0 && steps >= 0,
                      "fp64 reference: sequences and seq_len must be > 0 and steps >= 0 (got " +
                          std::to_string(sequences) + ", " + std::to_string(seq_len) + ", " +
                          std::to_string(steps) + ")");
    RINGSCALE_REQUIRE(fp64_reference_bytes(cfg, seq_len) < 0x1p46,
                      "fp64 reference: the model and sequence need more than 64 TiB");
}

// The batch's gradient at p into g (overwritten), one sequence at a time in order.
double batch_grads(fp64_model& model, const model_config& cfg, std::uint64_t data_seed,
                   std::int64_t sequences, std::int64_t seq_len, const double* p, double* g,
                   std::size_t n) {
    std::vector<std::int64_t> pos(static_cast<std::size_t>(seq_len));
    std::iota(pos.begin(), pos.end(), 0);
    std::vector<std::int32_t> ids(pos.size()), targets(pos.size());
    const auto total_tokens = static_cast<std::size_t>(sequences * seq_len);
    std::fill(g, g + n, 0.0);
    double loss = 0;
    for (std::int64_t s = 0; s < sequences; ++s) {
        fill_batch(data_seed, cfg.vocab, s, 1, pos, ids.data(), targets.data());
        loss += model.forward(p, ids.data(), targets.data(), total_tokens);
        model.backward(p, g);
    }
    return loss;
}

} // namespace

double fp64_reference_bytes(const model_config& cfg, std::int64_t seq_len) {
    const double total = static_cast<double>(param_layout(cfg).total());
    const double t = static_cast<double>(seq_len), h = static_cast<double>(cfg.hidden);
    const double q = static_cast<double>(cfg.qkv_width()), up = static_cast<double>(cfg.ffn_up());
    const double f = static_cast<double>(cfg.ffn_width());
    // Per block: x, xn1, att, xmid, xn2 (5h), qkv (q), h1 (up) and g (f), inv1, inv2. Head:
    // xlast, xf, invf, logits. Scratch: dx, tmp, dmid, datt (4h), dqkv (q), dg (up), dact (f).
    const double acts = static_cast<double>(cfg.layers) * t * (5 * h + q + up + f + 2) +
                        t * (2 * h + 1 + static_cast<double>(cfg.vocab)) + t * (4 * h + q + up + f);
    return 8.0 * (4.0 * total + acts) + 16.0 * t; // + ids, targets, positions
}

double fp64_loss_and_grads(const model_config& cfg, std::uint64_t data_seed, std::int64_t sequences,
                           std::int64_t seq_len, const mask_view& mask, const double* params,
                           double* grads) {
    check_sizes(cfg, sequences, seq_len, 0);
    fp64_model model(cfg, seq_len, mask);
    return batch_grads(model, cfg, data_seed, sequences, seq_len, params, grads,
                       param_layout(cfg).total());
}

std::vector<double> reference_train_fp64(const model_config& cfg, std::uint64_t data_seed,
                                         std::int64_t sequences, std::int64_t seq_len, int steps,
                                         const adamw_params& hp, const float* init,
                                         const mask_view& mask, const fp64_step_fn& on_step,
                                         std::vector<double>* final_params) {
    check_sizes(cfg, sequences, seq_len, steps);
    const std::size_t n = param_layout(cfg).total();
    fp64_model model(cfg, seq_len, mask);
    vec p(init, init + n), g(n), m(n, 0.0), v(n, 0.0);
    std::vector<double> losses;
    for (int step = 1; step <= steps; ++step) {
        const double loss =
            batch_grads(model, cfg, data_seed, sequences, seq_len, p.data(), g.data(), n);
        fp64::adamw_step(hp, step, n, p.data(), g.data(), m.data(), v.data());
        losses.push_back(loss);
        if (on_step)
            on_step(step, loss, p.data(), g.data());
    }
    if (final_params)
        *final_params = std::move(p);
    return losses;
}

} // namespace ringscale::kernels::model
