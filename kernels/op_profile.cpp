#include "kernels/op_profile.hpp"

#include "kernels/event_recorder.hpp"

namespace ringscale::kernels {

const char* op_name(op_kind k) {
    static constexpr std::array<const char*, op_kinds> names = {
        "embedding_fwd", "norm1_fwd",      "qkv_fwd",       "layout_fwd", "attention_fwd",
        "out_proj_fwd",  "residual_fwd",   "norm2_fwd",     "mlp_up_fwd", "gelu_fwd",
        "mlp_down_fwd",  "final_norm_fwd", "logits_fwd",    "loss_fwd",   "loss_bwd",
        "logits_bwd",    "final_norm_bwd", "mlp_down_bwd",  "gelu_bwd",   "mlp_up_bwd",
        "norm2_bwd",     "residual_bwd",   "out_proj_bwd",  "layout_bwd", "attention_bwd",
        "qkv_bwd",       "norm1_bwd",      "embedding_bwd", "optimizer",  "communication"};
    const auto i = static_cast<std::size_t>(k);
    return i < op_kinds ? names[i] : "unknown";
}

double op_profile::total_s() const {
    double sum = 0;
    for (const double s : m_s)
        sum += s;
    return sum;
}

void op_profile::attach_to_device() {
    if (m_device)
        m_device->attach(this);
}

void op_profile::scope::begin() {
    if (event_recorder* r = m_p->device())
        m_span = r->open();
    else
        m_start = now_s();
}

void op_profile::scope::end() {
    if (event_recorder* r = m_p->device()) {
        span_label what;
        what.op = static_cast<int>(m_k);
        r->close(m_span, what);
    } else {
        m_p->add(m_k, now_s() - m_start);
    }
}

} // namespace ringscale::kernels
