// kernels/transformer's device_attention_core: the single-rank attention of the training step
// through the device's attention calls (kernels/device.hpp), which on CUDA are the tensor-core
// flash-attention kernels reading bf16 or fp16 Q, K, V, dO.
#include "kernels/transformer.hpp"

namespace ringscale::kernels {

device_attention_core::device_attention_core(device& dev, std::vector<std::int64_t> positions,
                                             elem e)
    : m_dev(dev), m_pos(dev, std::move(positions)), m_elem(e) {}

const void* device_attention_core::as_input(const float* src, std::size_t n,
                                            dev_buffer<unsigned char>& buf) {
    if (m_elem == elem::f32)
        return src;
    const std::size_t bytes = n * elem_bytes(m_elem);
    if (buf.size() < bytes)
        buf.allocate(m_dev, bytes);
    m_dev.convert(m_elem, n, src, buf.data());
    return buf.data();
}

void device_attention_core::forward(const attention_shape& s, const float* q, const float* kv,
                                    float* o, float* lse, phase_timer& timer) {
    device_scope compute(m_dev, timer, phase::compute);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const auto* qi = static_cast<const unsigned char*>(as_input(q, qe, m_q));
    const auto* kvi = static_cast<const unsigned char*>(as_input(kv, 2 * kve, m_kv));
    const row_positions pos = m_pos.view();
    m_dev.attention_fwd_init(s, o, lse);
    m_dev.attention_fwd(s, m_elem, qi, kvi, kvi + kve * elem_bytes(m_elem), pos, pos, o, lse);
}

void device_attention_core::backward(const attention_shape& s, const float* q, const float* kv,
                                     const float* o, const float* d_o, const float* lse, float* dq,
                                     float* dkv, phase_timer& timer) {
    device_scope compute(m_dev, timer, phase::compute);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
    if (m_delta.size() < rows)
        m_delta.allocate(m_dev, rows);
    const auto* qi = static_cast<const unsigned char*>(as_input(q, qe, m_q));
    const auto* kvi = static_cast<const unsigned char*>(as_input(kv, 2 * kve, m_kv));
    const void* doi = as_input(d_o, qe, m_do);
    const row_positions pos = m_pos.view();
    m_dev.attention_bwd_delta(s, m_elem, o, doi, m_delta.data());
    m_dev.zero(dq, qe * sizeof(float));
    m_dev.zero(dkv, 2 * kve * sizeof(float));
    m_dev.attention_bwd(s, m_elem, qi, kvi, kvi + kve * elem_bytes(m_elem), doi, lse,
                        m_delta.data(), pos, pos, dq, dkv, dkv + kve);
}

} // namespace ringscale::kernels
