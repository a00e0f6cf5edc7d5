// The oracle of the fully connected layer: plain loops with double accumulation, the contract
// of kernels::cpu::linear_fwd / linear_bwd. Slow on purpose; tests compare the fast CPU and the
// CUDA layers against it.
#pragma once

#include "kernels/linear.hpp"

namespace ringscale::kernels::reference {

/// Reference forward: same contract as cpu::linear_fwd; plain loops, double accumulation.
void linear_fwd_ref(const linear_shape& s, const float* x, const float* w, const float* b,
                    float* y);

/// Reference backward: same contract as cpu::linear_bwd (dx overwritten, dw/db accumulated);
/// plain loops, each sum accumulated in double before it is added to the float gradient.
void linear_bwd_ref(const linear_shape& s, const float* x, const float* w, const float* dy,
                    float* dx, float* dw, float* db);

} // namespace ringscale::kernels::reference
