// Reference attention (the oracle): plain loops, double accumulation, causal masking by
// global token positions, grouped-query attention. Slow on purpose; tests and validation
// compare every fast kernel against it.
//
// Tensors are row-major BHSD: Q, O, dO, dQ [batch, heads, q_len, head_dim]; K, V, dK, dV
// [batch, kv_heads, k_len, head_dim]; LSE and delta [batch, heads, q_len]. Query head h
// reads kv head h / (heads / kv_heads). Key j is visible to query i iff !causal or
// k_pos[j] <= q_pos[i]; positions are global token indices, sorted ascending.
#pragma once

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
};

/// Throws config_error (one line) unless sizes are positive (q_len, k_len may be 0) and
/// heads is a multiple of kv_heads.
void check_attention_shape(const attention_shape& shape);

/// The softmax scale in use: shape.scale, or 1/sqrt(head_dim) when it is 0.
float attention_scale(const attention_shape& shape);

/// Elements of Q/O ([B, H, Sq, D]) and of K/V ([B, Hkv, Sk, D]).
std::int64_t attention_q_elems(const attention_shape& shape);
std::int64_t attention_kv_elems(const attention_shape& shape);

/// Forward: writes O [B,H,Sq,D] and LSE [B,H,Sq] (natural log of the sum of exp of the
/// scaled visible scores; -inf and O = 0 for a row with no visible key). Caller owns all.
void attention_fwd_ref(const attention_shape& shape, const float* q, const float* k, const float* v,
                       const std::int64_t* q_pos, const std::int64_t* k_pos, float* o, float* lse);

/// Backward: overwrites dQ [B,H,Sq,D], dK and dV [B,Hkv,Sk,D] with the gradients of
/// sum(O * dO) with respect to Q, K and V. Recomputes the softmax itself. Caller owns all.
void attention_bwd_ref(const attention_shape& shape, const float* q, const float* k, const float* v,
                       const float* d_o, const std::int64_t* q_pos, const std::int64_t* k_pos,
                       float* dq, float* dk, float* dv);

} // namespace ringscale::kernels
