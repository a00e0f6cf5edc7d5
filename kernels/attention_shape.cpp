#include "kernels/attention_shape.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <string>

namespace ringscale::kernels {

void check_attention_shape(const attention_shape& s) {
    if (s.batch < 1 || s.heads < 1 || s.kv_heads < 1 || s.head_dim < 1 || s.q_len < 0 ||
        s.k_len < 0)
        throw config_error("attention shape needs batch, heads, kv_heads, head_dim >= 1 and "
                           "q_len, k_len >= 0");
    if (s.heads % s.kv_heads != 0)
        throw config_error("attention heads (" + std::to_string(s.heads) +
                           ") must be a multiple of kv_heads (" + std::to_string(s.kv_heads) + ")");
    if (!(s.scale >= 0.0f) || std::isinf(s.scale))
        throw config_error("attention scale must be finite and >= 0 (0: 1/sqrt(head_dim))");
}

float attention_scale(const attention_shape& s) {
    return s.scale > 0.0f ? s.scale : 1.0f / std::sqrt(static_cast<float>(s.head_dim));
}

std::int64_t attention_q_elems(const attention_shape& s) {
    return s.batch * s.heads * s.q_len * s.head_dim;
}

std::int64_t attention_kv_elems(const attention_shape& s) {
    return s.batch * s.kv_heads * s.k_len * s.head_dim;
}

} // namespace ringscale::kernels
