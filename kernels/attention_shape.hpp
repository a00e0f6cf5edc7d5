// The shape of an attention problem and the conventions every attention kernel shares
// (reference, CPU, CUDA): tensors are row-major BHSD: Q, O, dO, dQ [batch, heads, q_len,
// head_dim]; K, V, dK, dV [batch, kv_heads, k_len, head_dim]; LSE and delta [batch, heads,
// q_len]. Query head h reads kv head h / (heads / kv_heads). Key j is visible to query i iff
// mask_visible(mask, causal, q_pos[i], k_pos[j]) (kernels/mask.hpp): !causal or k_pos[j] <=
// q_pos[i], and the mask's rules; positions are global token indices, sorted ascending.
#pragma once

#include "kernels/mask.hpp"

#include <cstdint>

namespace ringscale::kernels {

/// Problem shape shared by every attention kernel.
struct attention_shape {
    std::int64_t batch = 1;
    std::int64_t heads = 1;
    std::int64_t kv_heads = 1;
    std::int64_t q_len = 0; ///< query rows (this rank's local rows)
    std::int64_t k_len = 0; ///< key/value rows of this block
    std::int64_t head_dim = 64;
    bool causal = false;
    float scale = 0.0f; ///< softmax scale; 0 means 1/sqrt(head_dim)
    mask_view mask;     ///< rules beyond causal (window, documents, block-sparse, dilation)
    /// fp8 (E4M3) inputs only: 1 / the per-tensor scale Q, K, V and the backward's dO were
    /// stored with (kernels/cudnn_fp8.hpp); 1 for every other type.
    float descale_q = 1, descale_k = 1, descale_v = 1, descale_do = 1;
};

/// Throws config_error (one line) unless sizes are positive (q_len, k_len may be 0) and
/// heads is a multiple of kv_heads.
void check_attention_shape(const attention_shape& shape);

/// The softmax scale in use: shape.scale, or 1/sqrt(head_dim) when it is 0.
float attention_scale(const attention_shape& shape);

/// Elements of Q/O ([B, H, Sq, D]) and of K/V ([B, Hkv, Sk, D]).
std::int64_t attention_q_elems(const attention_shape& shape);
std::int64_t attention_kv_elems(const attention_shape& shape);

} // namespace ringscale::kernels
