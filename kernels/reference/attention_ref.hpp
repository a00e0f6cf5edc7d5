// Reference attention (the oracle): plain loops, double accumulation, masking pair by pair
// (causal and the shape's mask, kernels/mask.hpp) by global token positions, grouped-query
// attention. Slow on purpose; tests and validation
// compare every fast kernel against it. Shapes and conventions: kernels/attention_shape.hpp.
#pragma once

#include "kernels/attention_shape.hpp"

#include <cstdint>

namespace ringscale::kernels::reference {

/// Forward: writes O [B,H,Sq,D] and LSE [B,H,Sq] (natural log of the sum of exp of the
/// scaled visible scores; -inf and O = 0 for a row with no visible key). Caller owns all.
void attention_fwd_ref(const attention_shape& shape, const float* q, const float* k, const float* v,
                       const std::int64_t* q_pos, const std::int64_t* k_pos, float* o, float* lse);

/// Backward: overwrites dQ [B,H,Sq,D], dK and dV [B,Hkv,Sk,D] with the gradients of
/// sum(O * dO) with respect to Q, K and V. Recomputes the softmax itself. Caller owns all.
void attention_bwd_ref(const attention_shape& shape, const float* q, const float* k, const float* v,
                       const float* d_o, const std::int64_t* q_pos, const std::int64_t* k_pos,
                       float* dq, float* dk, float* dv);

} // namespace ringscale::kernels::reference
