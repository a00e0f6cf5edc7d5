#include "kernels/model/transformer.hpp"

#include "kernels/parallel.hpp"
#include "src/base/trace_events.hpp"

namespace ringscale::kernels::model {

transformer::transformer(const model_config& cfg, const batch_shape& shape, attention_core& core,
                         train_context& ctx)
    : m_cfg(cfg), m_shape(shape), m_core(core), m_ctx(ctx), m_exec(ctx.exec()), m_layout(cfg) {
    model_check(cfg);
}

attention_shape transformer::attention_shape_of(const model_config& cfg, const batch_shape& shape,
                                                const mask_view& mask) {
    attention_shape s;
    s.batch = shape.batch;
    s.heads = cfg.heads;
    s.kv_heads = cfg.kv_count();
    s.q_len = s.k_len = shape.rows;
    s.head_dim = cfg.head_dim();
    s.causal = true;
    s.mask = mask;
    return s;
}

std::uint64_t transformer::activation_floats(const model_config& cfg, const batch_shape& shape) {
    const auto t = static_cast<std::uint64_t>(shape.tokens());
    const auto h = static_cast<std::uint64_t>(cfg.hidden);
    const auto kv = static_cast<std::uint64_t>(cfg.kv_width());
    const auto up = static_cast<std::uint64_t>(cfg.ffn_up());
    const auto f = static_cast<std::uint64_t>(cfg.ffn_width());
    const auto heads = static_cast<std::uint64_t>(cfg.heads);
    const auto v = static_cast<std::uint64_t>(cfg.vocab);
    // Per block: x, xn1, q, o, a, xmid, xn2 (7h), kv (2 kv), h1 (up) and g (f); inv1, inv2,
    // lse.
    const std::uint64_t block = t * (7 * h + 2 * kv + up + f + 2 + heads);
    // Head: x_last, xf, invf, logits. Scratch: qkv (h + 2 kv), tmp, dmid, dx, dq, do (5h),
    // dg (up), dkv (2 kv), and SwiGLU's d(activation) (f).
    const std::uint64_t head = t * (2 * h + 1 + v);
    const std::uint64_t scratch = t * (6 * h + 4 * kv + up + (cfg.mlp == mlp_kind::swiglu ? f : 0));
    return static_cast<std::uint64_t>(cfg.layers) * block + head + scratch;
}

void transformer::reserve() {
    executor& dev = m_exec;
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto kv = static_cast<std::size_t>(m_cfg.kv_width());
    const auto up = static_cast<std::size_t>(m_cfg.ffn_up());
    const auto f = static_cast<std::size_t>(m_cfg.ffn_width());
    const auto heads = static_cast<std::size_t>(m_cfg.heads);
    m_act.resize(static_cast<std::size_t>(m_cfg.layers));
    for (auto& a : m_act) {
        for (auto* buf : {&a.x, &a.xn1, &a.q, &a.o, &a.a, &a.xmid, &a.xn2})
            buf->allocate(dev, t * h);
        a.kv.allocate(dev, 2 * t * kv);
        a.h1.allocate(dev, t * up);
        a.g.allocate(dev, t * f);
        a.inv1.allocate(dev, t);
        a.inv2.allocate(dev, t);
        a.lse.allocate(dev, t * heads);
    }
    m_x_last.allocate(dev, t * h);
    m_xf.allocate(dev, t * h);
    m_invf.allocate(dev, t);
    m_logits.allocate(dev, t * static_cast<std::size_t>(m_cfg.vocab));
    m_qkv.allocate(dev, t * (h + 2 * kv));
    for (auto* buf : {&m_tmp, &m_dmid, &m_dx, &m_dq, &m_do})
        buf->allocate(dev, t * h);
    m_dg.allocate(dev, t * up);
    m_dkv.allocate(dev, 2 * t * kv);
    if (m_cfg.mlp == mlp_kind::swiglu)
        m_dact.allocate(dev, t * f);
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
        phase_scope compute(m_exec, timer, phase::compute);
        float* x0 = m_cfg.layers > 0 ? m_act[0].x.data() : m_x_last.data();
        timed(op_kind::embedding_fwd), embedding_fwd(m_exec, t, v, h, p, ids, x0);
    }
    access.done(0, false, timer);
    for (int l = 0; l < m_cfg.layers; ++l) {
        p = access.params(l + 1, false, timer);
        float* out = l + 1 < m_cfg.layers ? m_act[static_cast<std::size_t>(l) + 1].x.data()
                                          : m_x_last.data();
        const trace::scope traced_layer(trace::layer_context(trace::kind::forward, l));
        block_fwd(l, p, m_act[static_cast<std::size_t>(l)].x.data(), out, timer);
        access.done(l + 1, false, timer);
    }
    p = access.params(m_layout.head_unit(), false, timer);
    head_fwd(p, timer);
    double loss = 0;
    {
        phase_scope compute(m_exec, timer, phase::compute);
        const op_profile::scope timed_loss(m_ctx.profile(), op_kind::loss_fwd);
        loss = cross_entropy_fwd(m_exec, t, v, total_tokens, m_logits.data(), targets,
                                 m_ctx.scratch());
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
        const trace::scope traced_layer(trace::layer_context(trace::kind::backward, l));
        block_bwd(l, p, access.grads(l + 1), m_dx.data(), timer);
        access.done(l + 1, true, timer);
    }
    float* g = access.grads(0);
    {
        phase_scope compute(m_exec, timer, phase::compute);
        timed(op_kind::embedding_bwd),
            embedding_bwd(m_exec, t, static_cast<std::size_t>(m_cfg.vocab), h, m_ids, m_dx.data(),
                          g);
    }
    access.done(0, true, timer);
}

} // namespace ringscale::kernels::model
