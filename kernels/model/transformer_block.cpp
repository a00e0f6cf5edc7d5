// One pre-norm block (its QKV projection and MLP in helpers) and the head of
// kernels/model/transformer: forward and backward by composing the layer kernels. Which outputs the
// kernels overwrite and which they accumulate decides the order here: linear_bwd and rmsnorm_bwd
// overwrite dx and accumulate dW/db/dγ, so every parameter gradient accumulates (micro-batches and
// buckets work) while activation gradients are plain scratch. `timed(k), call;` times the call into
// op k of the context's profile (the temporary scope lives to the end of the full expression;
// nothing when off).
#include "kernels/model/transformer.hpp"

namespace ringscale::kernels::model {

// Q, K, V of block l as attention heads from norm1's output. With as many K/V heads as query
// heads they come straight from the GEMM (on the CPU its stores write them; m_qkv is the
// token-major scratch where the backend writes y first); with fewer (GQA) the three groups
// differ in width, so y goes token-major to m_qkv and each group moves on its own.
void transformer::qkv_fwd(int l, const float* p, block_activations& a) {
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto q = static_cast<std::size_t>(m_cfg.qkv_width());
    const std::int64_t heads = m_cfg.heads, kvh = m_cfg.kv_count(), d = m_cfg.head_dim();
    const std::int64_t qw = m_cfg.qkv_width(), kvw = m_cfg.kv_width();
    const std::size_t kve = t * static_cast<std::size_t>(kvw);
    const float* w = p + m_layout.block().wqkv;
    if (kvh == heads) {
        float* const qkv[3] = {a.q.data(), a.kv.data(), a.kv.data() + kve};
        timed(op_kind::qkv_fwd), m_ctx.gemm_fwd_heads(4 * l, {t, h, q}, a.xn1.data(), w, nullptr,
                                                      m_shape, heads, d, qkv, m_qkv.data());
    } else {
        timed(op_kind::qkv_fwd),
            m_ctx.gemm_fwd(4 * l, {t, h, q}, a.xn1.data(), w, nullptr, m_qkv.data());
        const op_profile::scope moved(m_ctx.profile(), op_kind::layout_fwd);
        to_bhsd(m_exec, m_shape, heads, d, m_qkv.data(), qw, 0, a.q.data());
        to_bhsd(m_exec, m_shape, kvh, d, m_qkv.data(), qw, m_cfg.hidden, a.kv.data());
        to_bhsd(m_exec, m_shape, kvh, d, m_qkv.data(), qw, m_cfg.hidden + kvw, a.kv.data() + kve);
    }
    const op_profile::scope layout(m_ctx.profile(), op_kind::layout_fwd);
    // --dtype: the attention reads Q, K, V in the dtype (saved so for the backward too).
    m_ctx.round_attention(a.q.data(), t * h);
    m_ctx.round_attention(a.kv.data(), 2 * kve);
}

// dQ and dK|dV (m_dq, m_dkv) back to token-major columns, then the QKV GEMM's backward:
// dL/d(norm1 output) in m_tmp.
void transformer::qkv_bwd(int l, const float* p, float* g, block_activations& a) {
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto q = static_cast<std::size_t>(m_cfg.qkv_width());
    const std::int64_t heads = m_cfg.heads, kvh = m_cfg.kv_count(), d = m_cfg.head_dim();
    const std::int64_t qw = m_cfg.qkv_width(), kvw = m_cfg.kv_width();
    const std::size_t kve = t * static_cast<std::size_t>(kvw);
    const block_offsets& o = m_layout.block();
    {
        const op_profile::scope layout(m_ctx.profile(), op_kind::layout_bwd);
        from_bhsd(m_exec, m_shape, heads, d, m_dq.data(), qw, 0, m_qkv.data());
        from_bhsd(m_exec, m_shape, kvh, d, m_dkv.data(), qw, m_cfg.hidden, m_qkv.data());
        from_bhsd(m_exec, m_shape, kvh, d, m_dkv.data() + kve, qw, m_cfg.hidden + kvw,
                  m_qkv.data());
    }
    timed(op_kind::qkv_bwd), m_ctx.gemm_bwd(4 * l, {t, h, q}, a.xn1.data(), p + o.wqkv,
                                            m_qkv.data(), m_tmp.data(), g + o.wqkv, nullptr);
}

// The MLP of block l on norm2's output: up projection, GELU or SwiGLU, down projection into
// m_tmp.
void transformer::mlp_fwd(int l, const float* p, block_activations& a) {
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto up = static_cast<std::size_t>(m_cfg.ffn_up());
    const auto f = static_cast<std::size_t>(m_cfg.ffn_width());
    const block_offsets& o = m_layout.block();
    timed(op_kind::mlp_up_fwd),
        m_ctx.gemm_fwd(4 * l + 2, {t, h, up}, a.xn2.data(), p + o.w1, p + o.b1, a.h1.data());
    if (m_cfg.mlp == mlp_kind::swiglu)
        timed(op_kind::gelu_fwd), swiglu_fwd(m_exec, t, f, a.h1.data(), a.g.data());
    else
        timed(op_kind::gelu_fwd), gelu_fwd(m_exec, t * f, a.h1.data(), a.g.data());
    timed(op_kind::mlp_down_fwd),
        m_ctx.gemm_fwd(4 * l + 3, {t, f, h}, a.g.data(), p + o.w2, p + o.b2, m_tmp.data());
}

// The MLP's backward from dx = dL/d(its output): dL/d(norm2 output) in m_tmp.
void transformer::mlp_bwd(int l, const float* p, float* g, block_activations& a, const float* dx) {
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto up = static_cast<std::size_t>(m_cfg.ffn_up());
    const auto f = static_cast<std::size_t>(m_cfg.ffn_width());
    const block_offsets& o = m_layout.block();
    const bool swiglu = m_cfg.mlp == mlp_kind::swiglu;
    float* const dact = swiglu ? m_dact.data() : m_dg.data();
    timed(op_kind::mlp_down_bwd),
        m_ctx.gemm_bwd(4 * l + 3, {t, f, h}, a.g.data(), p + o.w2, dx, dact, g + o.w2, g + o.b2);
    if (swiglu)
        timed(op_kind::gelu_bwd), swiglu_bwd(m_exec, t, f, a.h1.data(), dact, m_dg.data());
    else
        timed(op_kind::gelu_bwd), gelu_bwd(m_exec, t * f, a.h1.data(), m_dg.data(), m_dg.data());
    timed(op_kind::mlp_up_bwd), m_ctx.gemm_bwd(4 * l + 2, {t, h, up}, a.xn2.data(), p + o.w1,
                                               m_dg.data(), m_tmp.data(), g + o.w1, g + o.b1);
}

void transformer::block_fwd(int l, const float* p, const float* x, float* x_out,
                            phase_timer& timer) {
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const std::int64_t heads = m_cfg.heads, d = m_cfg.head_dim(), hh = m_cfg.hidden;
    const block_offsets& o = m_layout.block();
    block_activations& a = m_act[static_cast<std::size_t>(l)];
    const attention_shape s = attn_shape();
    {
        phase_scope compute(m_exec, timer, phase::compute);
        timed(op_kind::norm1_fwd),
            rmsnorm_fwd(m_exec, t, h, m_cfg.eps, x, p + o.norm1, a.xn1.data(), a.inv1.data());
        qkv_fwd(l, p, a);
    }
    timed(op_kind::attention_fwd),
        m_core.forward(s, a.q.data(), a.kv.data(), a.o.data(), a.lse.data(), timer);
    phase_scope compute(m_exec, timer, phase::compute);
    timed(op_kind::layout_fwd), from_bhsd(m_exec, m_shape, heads, d, a.o.data(), hh, 0, a.a.data());
    timed(op_kind::out_proj_fwd),
        m_ctx.gemm_fwd(4 * l + 1, {t, h, h}, a.a.data(), p + o.wo, p + o.bo, m_tmp.data());
    timed(op_kind::residual_fwd), add(m_exec, t * h, x, m_tmp.data(), a.xmid.data());
    timed(op_kind::norm2_fwd), rmsnorm_fwd(m_exec, t, h, m_cfg.eps, a.xmid.data(), p + o.norm2,
                                           a.xn2.data(), a.inv2.data());
    mlp_fwd(l, p, a);
    timed(op_kind::residual_fwd), add(m_exec, t * h, a.xmid.data(), m_tmp.data(), x_out);
}

// dx: in, dL/d(block output); out, dL/d(block input).
void transformer::block_bwd(int l, const float* p, float* g, float* dx, phase_timer& timer) {
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const std::int64_t heads = m_cfg.heads, d = m_cfg.head_dim();
    const block_offsets& o = m_layout.block();
    block_activations& a = m_act[static_cast<std::size_t>(l)];
    const attention_shape s = attn_shape();
    {
        phase_scope compute(m_exec, timer, phase::compute);
        // MLP: x_out = xmid + W2·act(W1·norm2(xmid) + b1) + b2.
        mlp_bwd(l, p, g, a, dx);
        timed(op_kind::norm2_bwd),
            rmsnorm_bwd(m_exec, t, h, a.xmid.data(), p + o.norm2, a.inv2.data(), m_tmp.data(),
                        m_tmp.data(), g + o.norm2);
        timed(op_kind::residual_bwd), add(m_exec, t * h, dx, m_tmp.data(), m_dmid.data());
        // Attention: xmid = x + Wo·attn(...) + bo.
        // dO as heads straight from the dx GEMM (m_tmp: the token-major scratch).
        timed(op_kind::out_proj_bwd),
            m_ctx.gemm_bwd_heads(4 * l + 1, {t, h, h}, a.a.data(), p + o.wo, m_dmid.data(), m_shape,
                                 heads, d, m_do.data(), g + o.wo, g + o.bo, m_tmp.data());
        timed(op_kind::layout_bwd), m_ctx.round_attention(m_do.data(), t * h);
    }
    timed(op_kind::attention_bwd),
        m_core.backward(s, a.q.data(), a.kv.data(), a.o.data(), m_do.data(), a.lse.data(),
                        m_dq.data(), m_dkv.data(), timer);
    phase_scope compute(m_exec, timer, phase::compute);
    qkv_bwd(l, p, g, a);
    timed(op_kind::norm1_bwd), rmsnorm_bwd(m_exec, t, h, a.x.data(), p + o.norm1, a.inv1.data(),
                                           m_tmp.data(), m_tmp.data(), g + o.norm1);
    timed(op_kind::residual_bwd), add(m_exec, t * h, m_dmid.data(), m_tmp.data(), dx);
}

void transformer::head_fwd(const float* p, phase_timer& timer) {
    phase_scope compute(m_exec, timer, phase::compute);
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto v = static_cast<std::size_t>(m_cfg.vocab);
    const head_offsets& o = m_layout.head();
    timed(op_kind::final_norm_fwd), rmsnorm_fwd(m_exec, t, h, m_cfg.eps, m_x_last.data(),
                                                p + o.norm, m_xf.data(), m_invf.data());
    timed(op_kind::logits_fwd),
        m_ctx.gemm_fwd(static_cast<int>(4 * m_cfg.layers), {t, h, v}, m_xf.data(), p + o.wout,
                       p + o.bout, m_logits.data());
}

void transformer::head_bwd(const float* p, float* g, phase_timer& timer) {
    phase_scope compute(m_exec, timer, phase::compute);
    const auto t = static_cast<std::size_t>(m_shape.tokens());
    const auto h = static_cast<std::size_t>(m_cfg.hidden);
    const auto v = static_cast<std::size_t>(m_cfg.vocab);
    const head_offsets& o = m_layout.head();
    // In place: the logits become dlogits (the next forward recomputes them).
    timed(op_kind::loss_bwd), cross_entropy_bwd(m_exec, t, v, m_total_tokens, m_logits.data(),
                                                m_targets, m_logits.data());
    timed(op_kind::logits_bwd),
        m_ctx.gemm_bwd(static_cast<int>(4 * m_cfg.layers), {t, h, v}, m_xf.data(), p + o.wout,
                       m_logits.data(), m_tmp.data(), g + o.wout, g + o.bout);
    timed(op_kind::final_norm_bwd),
        rmsnorm_bwd(m_exec, t, h, m_x_last.data(), p + o.norm, m_invf.data(), m_tmp.data(),
                    m_dx.data(), g + o.norm);
}

} // namespace ringscale::kernels::model
