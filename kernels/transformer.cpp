#include "kernels/transformer.hpp"

#include "kernels/parallel.hpp"

#include <algorithm>

namespace ringscale::kernels {

local_attention_core::local_attention_core(std::vector<std::int64_t> positions)
    : m_pos(std::move(positions)) {}

void local_attention_core::forward(const attention_shape& s, const float* q, const float* kv,
                                   float* o, float* lse, phase_timer& timer) {
    auto compute = timer.time(phase::compute);
    attention_workspace_reserve(m_ws);
    const std::int64_t kve = attention_kv_elems(s);
    attention_fwd_init(s, o, lse);
    attention_fwd_cpu(s, q, kv, kv + kve, m_pos.data(), m_pos.data(), o, lse, m_ws);
}

void local_attention_core::backward(const attention_shape& s, const float* q, const float* kv,
                                    const float* o, const float* d_o, const float* lse, float* dq,
                                    float* dkv, phase_timer& timer) {
    auto compute = timer.time(phase::compute);
    const std::int64_t kve = attention_kv_elems(s);
    m_delta.resize(static_cast<std::size_t>(s.batch * s.heads * s.q_len));
    attention_bwd_delta(s, o, d_o, m_delta.data());
    std::fill(dq, dq + attention_q_elems(s), 0.0f);
    std::fill(dkv, dkv + 2 * kve, 0.0f);
    attention_bwd_cpu(s, q, kv, kv + kve, d_o, lse, m_delta.data(), m_pos.data(), m_pos.data(), dq,
                      dkv, dkv + kve, m_ws);
}

void to_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
             std::int64_t cols, std::int64_t col0, float* dst) {
    // One (sequence, head) pair per item, split over the rank's threads.
    const auto pairs = static_cast<std::size_t>(s.batch * heads);
    parallel_for(pairs, 1, [&](std::size_t begin, std::size_t end) {
        for (auto bh = static_cast<std::int64_t>(begin); bh < static_cast<std::int64_t>(end);
             ++bh) {
            const std::int64_t b = bh / heads, h = bh % heads;
            for (std::int64_t r = 0; r < s.rows; ++r) {
                const float* in = src + (b * s.rows + r) * cols + col0 + h * d;
                std::copy(in, in + d, dst + (bh * s.rows + r) * d);
            }
        }
    });
}

void from_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
               std::int64_t cols, std::int64_t col0, float* dst) {
    const auto pairs = static_cast<std::size_t>(s.batch * heads);
    parallel_for(pairs, 1, [&](std::size_t begin, std::size_t end) {
        for (auto bh = static_cast<std::int64_t>(begin); bh < static_cast<std::int64_t>(end);
             ++bh) {
            const std::int64_t b = bh / heads, h = bh % heads;
            for (std::int64_t r = 0; r < s.rows; ++r) {
                const float* in = src + (bh * s.rows + r) * d;
                std::copy(in, in + d, dst + (b * s.rows + r) * cols + col0 + h * d);
            }
        }
    });
}

transformer::transformer(const model_config& cfg, const batch_shape& shape, attention_core& core,
                         train_ops& ops)
    : m_cfg(cfg), m_shape(shape), m_core(core), m_ops(ops), m_layout(cfg) {
    model_check(cfg);
}

attention_shape transformer::attn_shape() const {
    attention_shape s;
    s.batch = m_shape.batch;
    s.heads = s.kv_heads = m_cfg.heads;
    s.q_len = s.k_len = m_shape.rows;
    s.head_dim = m_cfg.head_dim();
    s.causal = true;
    return s;
}

std::uint64_t transformer::activation_floats(const model_config& cfg, const batch_shape& shape) {
    const auto t = static_cast<std::uint64_t>(shape.tokens());
    const auto h = static_cast<std::uint64_t>(cfg.hidden);
    const auto heads = static_cast<std::uint64_t>(cfg.heads);
    const auto v = static_cast<std::uint64_t>(cfg.vocab);
    // Per block: x, xn1, q, kv (2h), o, a, xmid, xn2 (9h), h1 and g (8h); inv1, inv2, lse.
    const std::uint64_t block = t * (17 * h + 2 + heads);
    // Head: x_last, xf, invf, logits. Scratch: qkv (3h), tmp, dmid, dx (3h), dg (4h),
    // dq (h), dkv (2h), do (h).
    const std::uint64_t head = t * (2 * h + 1 + v);
    const std::uint64_t scratch = t * 14 * h;
    return static_cast<std::uint64_t>(cfg.layers) * block + head + scratch;
}

void transformer::reserve() {
    device& dev = m_ops.dev();
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto heads = static_cast<std::size_t>(m_cfg.heads);
    m_act.resize(static_cast<std::size_t>(m_cfg.layers));
    for (auto& a : m_act) {
        for (auto* buf : {&a.x, &a.xn1, &a.q, &a.o, &a.a, &a.xmid, &a.xn2})
            buf->allocate(dev, t * h);
        a.kv.allocate(dev, 2 * t * h);
        a.h1.allocate(dev, 4 * t * h);
        a.g.allocate(dev, 4 * t * h);
        a.inv1.allocate(dev, t);
        a.inv2.allocate(dev, t);
        a.lse.allocate(dev, t * heads);
    }
    m_x_last.allocate(dev, t * h);
    m_xf.allocate(dev, t * h);
    m_invf.allocate(dev, t);
    m_logits.allocate(dev, t * static_cast<std::size_t>(m_cfg.vocab));
    m_qkv.allocate(dev, 3 * t * h);
    for (auto* buf : {&m_tmp, &m_dmid, &m_dx, &m_dq, &m_do})
        buf->allocate(dev, t * h);
    m_dg.allocate(dev, 4 * t * h);
    m_dkv.allocate(dev, 2 * t * h);
}

double transformer::forward(unit_access& access, const std::int32_t* ids,
                            const std::int32_t* targets, std::size_t total_tokens,
                            phase_timer& timer) {
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto v = static_cast<std::size_t>(m_cfg.vocab);
    m_ids = ids;
    m_targets = targets;
    m_total_tokens = total_tokens;
    const float* p = access.params(0, false, timer);
    {
        device_scope compute(m_ops.dev(), timer, phase::compute);
        float* x0 = m_cfg.layers > 0 ? m_act[0].x.data() : m_x_last.data();
        timed(op_kind::embedding_fwd), m_ops.embedding_fwd(t, v, h, p, ids, x0);
    }
    access.done(0, false, timer);
    for (int l = 0; l < m_cfg.layers; ++l) {
        p = access.params(l + 1, false, timer);
        float* out = l + 1 < m_cfg.layers ? m_act[static_cast<std::size_t>(l) + 1].x.data()
                                          : m_x_last.data();
        block_fwd(l, p, m_act[static_cast<std::size_t>(l)].x.data(), out, timer);
        access.done(l + 1, false, timer);
    }
    p = access.params(m_layout.head_unit(), false, timer);
    head_fwd(p, timer);
    double loss = 0;
    {
        device_scope compute(m_ops.dev(), timer, phase::compute);
        const op_profile::scope timed_loss(m_ops.profile(), op_kind::loss_fwd);
        loss = m_ops.cross_entropy_fwd(t, v, total_tokens, m_logits.data(), targets);
    }
    access.done(m_layout.head_unit(), false, timer);
    return loss;
}

void transformer::backward(unit_access& access, phase_timer& timer) {
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const int head = m_layout.head_unit();
    const float* p = access.params(head, true, timer);
    head_bwd(p, access.grads(head), timer); // leaves dL/dx_last in m_dx
    access.done(head, true, timer);
    for (int l = static_cast<int>(m_cfg.layers) - 1; l >= 0; --l) {
        p = access.params(l + 1, true, timer);
        block_bwd(l, p, access.grads(l + 1), m_dx.data(), timer);
        access.done(l + 1, true, timer);
    }
    float* g = access.grads(0);
    {
        device_scope compute(m_ops.dev(), timer, phase::compute);
        timed(op_kind::embedding_bwd),
            m_ops.embedding_bwd(t, static_cast<std::size_t>(m_cfg.vocab), h, m_ids, m_dx.data(), g);
    }
    access.done(0, true, timer);
}

} // namespace ringscale::kernels
