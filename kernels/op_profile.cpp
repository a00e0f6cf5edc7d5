#include "kernels/op_profile.hpp"

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

} // namespace ringscale::kernels
