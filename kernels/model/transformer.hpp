// The training step's transformer: embedding, `layers` pre-norm blocks (RMSNorm, causal
// attention with QKV and output projections, grouped-query when the model has fewer K/V heads,
// RMSNorm, GELU or SwiGLU MLP, residuals), final RMSNorm,
// output projection and cross-entropy. Forward and backward are written once against the
// kernels on a training context's executor (kernels/model/train_context: the CPU kernels in fp32,
// or the CUDA kernels on the executor's stream) and an attention core
// (kernels/model/attention_core: single-rank here, ring, all-gather or Ulysses context parallelism
// in jobs/).
//
// Data layout: a rank holds `batch` sequences of `rows` tokens each (all S tokens, or its
// context-parallel share), token-major [batch, rows, hidden]. Attention runs on BHSD
// tensors [batch, heads, rows, head_dim]; the transposes between the two are counted as
// compute. Parameters and gradients are reached per unit (embedding, block l, head) through
// unit_access, so data-parallel strategies decide where they live (full or gathered shards).
#pragma once

#include "kernels/dev_buffer.hpp"
#include "kernels/model/attention_core.hpp"
#include "kernels/model/params.hpp"
#include "kernels/model/train_context.hpp"
#include "src/base/clock.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::kernels::model {

/// Where each unit's parameters and gradients live (units as in param_layout).
class unit_access {
  public:
    virtual ~unit_access() = default;
    /// Unit u's parameters, valid until done(u, backward). Called before every unit's forward
    /// and before the backward of units 1..L+1 (the embedding's backward reads none).
    virtual const float* params(int u, bool backward, phase_timer& timer) = 0;
    /// Unit u's gradient, [unit size]; the backward ACCUMULATES into it.
    virtual float* grads(int u) = 0;
    /// Unit u's forward or backward has finished.
    virtual void done(int /*u*/, bool /*backward*/, phase_timer& /*timer*/) {}
};

/// Every unit is a slice of one full flat parameter buffer and one full flat gradient.
class full_access : public unit_access {
  public:
    full_access(const param_layout& layout, const float* params, float* grads)
        : m_layout(layout), m_params(params), m_grads(grads) {}
    const float* params(int u, bool, phase_timer&) override {
        return m_params + m_layout.unit(u).offset;
    }
    float* grads(int u) override { return m_grads + m_layout.unit(u).offset; }

  private:
    const param_layout& m_layout;
    const float* m_params;
    float* m_grads;
};

/// One block's saved forward activations (token-major unless noted), in the executor's memory.
struct block_activations {
    dev_buffer<float> x, xn1, inv1, q, kv, o, lse, a, xmid, xn2, inv2, h1, g;
};

/// The model on one rank's batch, computed on `ctx`'s executor (default: the CPU kernels);
/// every buffer lives in that executor's memory. Not collective itself; the attention core may
/// be.
class transformer {
  public:
    transformer(const model_config& cfg, const batch_shape& shape, attention_core& core,
                train_context& ctx = default_cpu_context());

    /// Floats of saved activations plus scratch for `shape` (preflight and the breakdown).
    static std::uint64_t activation_floats(const model_config& cfg, const batch_shape& shape);
    /// Allocate activations and scratch on the executor. Not collective.
    void reserve();

    /// Forward; returns this rank's share of the loss: Σ CE over its tokens / total_tokens
    /// (nats). ids and targets are [batch, rows] in the executor's memory; both must stay alive
    /// until backward.
    double forward(unit_access& access, const std::int32_t* ids, const std::int32_t* targets,
                   std::size_t total_tokens, phase_timer& timer);
    /// Backward of the last forward: ACCUMULATES every unit's gradient, in reverse unit order.
    void backward(unit_access& access, phase_timer& timer);

    const param_layout& layout() const { return m_layout; }
    /// The local attention problem: B sequences, H heads, rows x rows, causal, the mask.
    attention_shape attn_shape() const { return attention_shape_of(m_cfg, m_shape, m_mask); }
    /// The same for a model `cfg` on `shape` through `mask`, before a model exists. Pure.
    static attention_shape attention_shape_of(const model_config& cfg, const batch_shape& shape,
                                              const mask_view& mask);
    /// Attend through `mask` too (packed documents); its arrays must outlive the model.
    void set_attention_mask(const mask_view& mask) { m_mask = mask; }

  private:
    void block_fwd(int l, const float* p, const float* x, float* x_out, phase_timer& timer);
    void block_bwd(int l, const float* p, float* g, float* dx, phase_timer& timer);
    void head_fwd(const float* p, phase_timer& timer);
    void head_bwd(const float* p, float* g, phase_timer& timer);
    /// Times the rest of the full expression into op k of the context's profile, if any.
    op_profile::scope timed(op_kind k) const { return op_profile::scope(m_ctx.profile(), k); }

    model_config m_cfg;
    batch_shape m_shape;
    attention_core& m_core;
    mask_view m_mask;
    train_context& m_ctx;
    executor& m_exec;
    param_layout m_layout;
    std::vector<block_activations> m_act;
    dev_buffer<float> m_x_last, m_xf, m_invf, m_logits; // head activations
    dev_buffer<float> m_qkv, m_tmp, m_dmid, m_dx, m_dg, m_dq, m_dkv, m_do;
    dev_buffer<float> m_dact; // SwiGLU: dL/d(activation) [tokens, ffn]
    void qkv_fwd(int l, const float* p, block_activations& a);
    void qkv_bwd(int l, const float* p, float* g, block_activations& a);
    void mlp_fwd(int l, const float* p, block_activations& a);
    void mlp_bwd(int l, const float* p, float* g, block_activations& a, const float* dx);
    const std::int32_t* m_ids = nullptr;
    const std::int32_t* m_targets = nullptr;
    std::size_t m_total_tokens = 0;
};

} // namespace ringscale::kernels::model
