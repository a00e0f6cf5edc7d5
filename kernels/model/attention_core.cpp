// The single-rank attention of the training step through the attention kernels
// (kernels/kernels.hpp): on the CPU the fp32 flash-attention kernels in one call each, on
// CUDA the tensor-core kernels reading bf16 Q, K, V, dO.
#include "kernels/model/attention_core.hpp"

namespace ringscale::kernels::model {

elem attention_input_type(executor& exec) {
    return attention_supports(exec, elem::f32) ? elem::f32 : elem::bf16;
}

const void* attention_input(executor& exec, elem e, const float* src, std::size_t n,
                            dev_buffer<unsigned char>& buf) {
    if (e == elem::f32)
        return src;
    const std::size_t bytes = n * elem_bytes(e);
    if (buf.size() < bytes)
        buf.allocate(exec, bytes);
    convert(exec, e, n, src, buf.data());
    return buf.data();
}

local_attention_core::local_attention_core(executor& exec, std::vector<std::int64_t> positions)
    : m_exec(exec), m_pos(exec, std::move(positions)), m_elem(attention_input_type(exec)) {}

void local_attention_core::forward(const attention_shape& s, const float* q, const float* kv,
                                   float* o, float* lse, phase_timer& timer) {
    phase_scope compute(m_exec, timer, phase::compute);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const auto* qi = static_cast<const unsigned char*>(attention_input(m_exec, m_elem, q, qe, m_q));
    const auto* kvi =
        static_cast<const unsigned char*>(attention_input(m_exec, m_elem, kv, 2 * kve, m_kv));
    const row_positions pos = m_pos.view();
    attention_fwd_init(m_exec, s, o, lse);
    attention_fwd(m_exec, s, m_elem, qi, kvi, kvi + kve * elem_bytes(m_elem), pos, pos, o, lse,
                  attention_split::whole, {});
}

void local_attention_core::backward(const attention_shape& s, const float* q, const float* kv,
                                    const float* o, const float* d_o, const float* lse, float* dq,
                                    float* dkv, phase_timer& timer) {
    phase_scope compute(m_exec, timer, phase::compute);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
    if (m_delta.size() < rows)
        m_delta.allocate(m_exec, rows);
    const auto* qi = static_cast<const unsigned char*>(attention_input(m_exec, m_elem, q, qe, m_q));
    const auto* kvi =
        static_cast<const unsigned char*>(attention_input(m_exec, m_elem, kv, 2 * kve, m_kv));
    const void* doi = attention_input(m_exec, m_elem, d_o, qe, m_do);
    const row_positions pos = m_pos.view();
    attention_bwd_delta(m_exec, s, m_elem, o, doi, m_delta.data());
    m_exec.zero(dq, qe * sizeof(float));
    m_exec.zero(dkv, 2 * kve * sizeof(float));
    attention_bwd(m_exec, s, m_elem, qi, kvi, kvi + kve * elem_bytes(m_elem), doi, lse,
                  m_delta.data(), pos, pos, dq, dkv, dkv + kve, attention_split::whole, {});
}

} // namespace ringscale::kernels::model
