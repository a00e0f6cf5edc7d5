// The training step's transformer: embedding, `layers` pre-norm blocks (RMSNorm, causal
// attention with QKV and output projections, RMSNorm, GELU MLP, residuals), final RMSNorm,
// output projection and cross-entropy. Forward and backward are written once against a
// training backend (kernels/train_ops: the CPU kernels in fp32, or the CUDA kernels on a
// device's stream) and an attention core: single-rank attention here (CPU, or the device's
// attention kernels on bf16 inputs), ring or all-gather context parallelism in jobs/.
//
// Data layout: a rank holds `batch` sequences of `rows` tokens each (all S tokens, or its
// context-parallel share), token-major [batch, rows, hidden]. Attention runs on BHSD
// tensors [batch, heads, rows, head_dim]; the transposes between the two are counted as
// compute. Parameters and gradients are reached per unit (embedding, block l, head) through
// unit_access, so data-parallel strategies decide where they live (full or gathered shards).
#pragma once

#include "kernels/attention_cpu.hpp"
#include "kernels/dev_buffer.hpp"
#include "kernels/model_params.hpp"
#include "kernels/train_ops.hpp"
#include "src/base/clock.hpp"
#include "src/base/memory.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::kernels {

/// Causal self-attention over a rank's rows. Q, O, dO, dQ are [B, H, rows, D]; `kv` and `dkv`
/// hold this rank's K then V, each [B, H, rows, D]. Implementations may be collective.
class attention_core {
  public:
    virtual ~attention_core() = default;
    /// O and LSE [B, H, rows] of the local queries against every key the core sees.
    virtual void forward(const attention_shape& s, const float* q, const float* kv, float* o,
                         float* lse, phase_timer& timer) = 0;
    /// dQ and this rank's [dK | dV], both OVERWRITTEN.
    virtual void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                          const float* d_o, const float* lse, float* dq, float* dkv,
                          phase_timer& timer) = 0;
};

/// Single-rank causal attention: the rank's rows (global positions `positions`, the same
/// for every sequence) attend to themselves as one K/V block.
class local_attention_core final : public attention_core {
  public:
    explicit local_attention_core(std::vector<std::int64_t> positions);
    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer& timer) override;
    void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                  const float* d_o, const float* lse, float* dq, float* dkv,
                  phase_timer& timer) override;

  private:
    std::vector<std::int64_t> m_pos;
    host_buffer<float> m_delta;
    attention_workspace m_ws;
};

/// Single-rank causal attention through a kernels::device's attention calls (the CUDA path):
/// Q, K, V and dO are rounded to `e` (bf16 on CUDA; f32 passes them through) in scratch
/// buffers of the device, O, LSE and every gradient stay fp32. Not collective.
class device_attention_core final : public attention_core {
  public:
    device_attention_core(device& dev, std::vector<std::int64_t> positions, elem e);
    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer& timer) override;
    void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                  const float* d_o, const float* lse, float* dq, float* dkv,
                  phase_timer& timer) override;

  private:
    // `n` fp32 values as the kernel's input type: `src` itself for f32, else rounded into `buf`.
    const void* as_input(const float* src, std::size_t n, dev_buffer<unsigned char>& buf);

    device& m_dev;
    dev_positions m_pos;
    elem m_elem;
    dev_buffer<unsigned char> m_q, m_kv, m_do;
    dev_buffer<float> m_delta;
};

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

/// One block's saved forward activations (token-major unless noted), in the device's memory.
struct block_activations {
    dev_buffer<float> x, xn1, inv1, q, kv, o, lse, a, xmid, xn2, inv2, h1, g;
};

/// The model on one rank's batch, computed through `ops` (default: the CPU kernels) on its
/// device; every buffer lives in that device's memory. Not collective itself; the attention
/// core may be.
class transformer {
  public:
    transformer(const model_config& cfg, const batch_shape& shape, attention_core& core,
                train_ops& ops = default_cpu_train_ops());

    /// Floats of saved activations plus scratch for `shape` (preflight and the breakdown).
    static std::uint64_t activation_floats(const model_config& cfg, const batch_shape& shape);
    /// Allocate activations and scratch on the device. Not collective.
    void reserve();

    /// Forward; returns this rank's share of the loss: Σ CE over its tokens / total_tokens
    /// (nats). ids and targets are [batch, rows] in the device's memory; both must stay alive
    /// until backward.
    double forward(unit_access& access, const std::int32_t* ids, const std::int32_t* targets,
                   std::size_t total_tokens, phase_timer& timer);
    /// Backward of the last forward: ACCUMULATES every unit's gradient, in reverse unit order.
    void backward(unit_access& access, phase_timer& timer);

    const param_layout& layout() const { return m_layout; }
    /// The local attention problem: B sequences, H heads, rows x rows, causal.
    attention_shape attn_shape() const;

  private:
    void block_fwd(int l, const float* p, const float* x, float* x_out, phase_timer& timer);
    void block_bwd(int l, const float* p, float* g, float* dx, phase_timer& timer);
    void head_fwd(const float* p, phase_timer& timer);
    void head_bwd(const float* p, float* g, phase_timer& timer);
    /// Times the rest of the full expression into op k of the backend's profile, if any.
    op_profile::scope timed(op_kind k) const { return op_profile::scope(m_ops.profile(), k); }

    model_config m_cfg;
    batch_shape m_shape;
    attention_core& m_core;
    train_ops& m_ops;
    param_layout m_layout;
    std::vector<block_activations> m_act;
    dev_buffer<float> m_x_last, m_xf, m_invf, m_logits; // head activations
    dev_buffer<float> m_qkv, m_tmp, m_dmid, m_dx, m_dg, m_dq, m_dkv, m_do;
    const std::int32_t* m_ids = nullptr;
    const std::int32_t* m_targets = nullptr;
    std::size_t m_total_tokens = 0;
};

/// Token-major [batch, rows, cols] columns [col0, col0 + heads*D) -> BHSD [batch, heads, rows, D].
void to_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
             std::int64_t cols, std::int64_t col0, float* dst);
/// Inverse of to_bhsd: BHSD -> columns [col0, col0 + heads*D) of token-major [.., cols].
void from_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
               std::int64_t cols, std::int64_t col0, float* dst);

} // namespace ringscale::kernels
