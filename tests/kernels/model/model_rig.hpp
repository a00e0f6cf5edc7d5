// The model tests' shared pieces: tiny configurations, every parameter tensor by name and place,
// a model with its seeded batch (rig), and attention through the reference kernel (ref_core).
#pragma once

#include "kernels/model/reference_train.hpp"
#include "kernels/model/transformer.hpp"
#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace ringscale::test_model {

using namespace ringscale::kernels;
using namespace ringscale::kernels::model;

/// Two layers of width 64, one head, a vocabulary of 16.
inline model_config tiny() {
    model_config c;
    c.layers = 2;
    c.hidden = 64;
    c.heads = 1;
    c.vocab = 16;
    return c;
}

/// Grouped-query attention (2 query heads on 1 K/V head) and a SwiGLU MLP of width 96.
inline model_config tiny_gqa_swiglu() {
    model_config c = tiny();
    c.hidden = 128;
    c.heads = 2;
    c.kv_heads = 1;
    c.ffn = 96;
    c.mlp = mlp_kind::swiglu;
    return c;
}

/// 0, 1, ..., n - 1.
inline std::vector<std::int64_t> iota(std::int64_t n) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 0);
    return v;
}

/// A model on `nseq` sequences of `rows` tokens, with its data and any attention core.
struct rig {
    model_config cfg;
    param_layout layout;
    batch_shape shape;
    std::vector<float> params, grads;
    std::vector<std::int32_t> ids, targets;
    phase_timer timer;

    rig(const model_config& c, std::int64_t nseq, std::int64_t rows)
        : cfg(c), layout(c), shape{nseq, rows}, params(layout.total()), grads(layout.total()),
          ids(static_cast<std::size_t>(nseq * rows)), targets(ids.size()) {
        init_params(cfg, layout, 3, params.data());
        // Perturb the norms and biases away from 1 and 0 so their gradients are generic.
        for (std::size_t k = 0; k < params.size(); ++k)
            params[k] += 0.05f * uniform_at(99, k);
        fill_batch(5, cfg.vocab, 0, nseq, iota(rows), ids.data(), targets.data());
    }
    double loss_and_grads(attention_core& core, bool with_grads = true) {
        transformer model(cfg, shape, core);
        model.reserve();
        std::fill(grads.begin(), grads.end(), 0.0f);
        full_access access(layout, params.data(), grads.data());
        const double loss = model.forward(access, ids.data(), targets.data(), ids.size(), timer);
        if (with_grads)
            model.backward(access, timer);
        return loss;
    }
};

/// One parameter tensor: its name and its place in the flat buffer.
struct tensor {
    const char* name;
    std::size_t offset, size;
};

/// Every parameter tensor of the model, unit by unit, in layout order.
inline std::vector<tensor> tensors_of(const model_config& cfg, const param_layout& l) {
    std::vector<tensor> out{{"embedding", 0, l.unit(0).size}};
    const block_offsets& b = l.block();
    const std::size_t h = static_cast<std::size_t>(cfg.hidden);
    const auto q = static_cast<std::size_t>(cfg.qkv_width());
    const auto up = static_cast<std::size_t>(cfg.ffn_up());
    const auto f = static_cast<std::size_t>(cfg.ffn_width());
    for (int k = 1; k <= cfg.layers; ++k) {
        const std::size_t u = l.unit(k).offset;
        for (tensor t : std::vector<tensor>{{"norm1", b.norm1, h},
                                            {"wqkv", b.wqkv, q * h},
                                            {"wo", b.wo, h * h},
                                            {"bo", b.bo, h},
                                            {"norm2", b.norm2, h},
                                            {"w1", b.w1, up * h},
                                            {"b1", b.b1, up},
                                            {"w2", b.w2, f * h},
                                            {"b2", b.b2, h}}) {
            t.offset += u;
            out.push_back(t);
        }
    }
    const std::size_t u = l.unit(l.head_unit()).offset;
    const head_offsets& hd = l.head();
    const auto v = static_cast<std::size_t>(cfg.vocab);
    out.push_back({"norm_f", u + hd.norm, h});
    out.push_back({"wout", u + hd.wout, v * h});
    out.push_back({"bout", u + hd.bout, v});
    return out;
}

/// Attention through the reference kernel (double accumulation), one block.
class ref_core final : public attention_core {
  public:
    explicit ref_core(std::vector<std::int64_t> pos) : m_pos(std::move(pos)) {}
    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer&) override {
        reference::attention_fwd_ref(s, q, kv, kv + attention_kv_elems(s), m_pos.data(),
                                     m_pos.data(), o, lse);
    }
    void backward(const attention_shape& s, const float* q, const float* kv, const float*,
                  const float* d_o, const float*, float* dq, float* dkv, phase_timer&) override {
        const std::int64_t kve = attention_kv_elems(s);
        reference::attention_bwd_ref(s, q, kv, kv + kve, d_o, m_pos.data(), m_pos.data(), dq, dkv,
                                     dkv + kve);
    }

  private:
    std::vector<std::int64_t> m_pos;
};

} // namespace ringscale::test_model
