// GELU activation, tanh approximation (the form GPT-2 and PyTorch's approximate="tanh" use):
//   gelu(x) = 0.5·x·(1 + tanh(u)),  u = sqrt(2/π)·(x + 0.044715·x³).
// Elementwise fp32 over caller-owned buffers, split over the rank's threads (kernels/parallel);
// tanh is a branch-free exp-based form (absolute error ~1e-7) so that the loops vectorise; where
// the CPU has AVX-512F, loops by hand instead, x·s with s = 1/(1 + e^{-2u}) by vrcp14ps and a
// Newton step (no division).
#pragma once

#include <cstddef>

namespace ringscale::kernels::cpu {

/// y[k] = gelu(x[k]) for k < n (tanh form). Overwrites y; y may alias x (in place). n may be 0.
void gelu_fwd(std::size_t n, const float* x, float* y);

/// dx[k] = dy[k] · gelu'(x[k]) for k < n, where
/// gelu'(x) = 0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·sqrt(2/π)·(1 + 3·0.044715·x²).
/// Needs the forward's input x (not its output). OVERWRITES dx; dx may alias dy.
void gelu_bwd(std::size_t n, const float* x, const float* dy, float* dx);

} // namespace ringscale::kernels::cpu
