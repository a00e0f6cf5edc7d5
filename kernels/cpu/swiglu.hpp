// SwiGLU activation (Llama's MLP): the up projection's output h1 [rows, 2f] holds the gate in
// columns [0, f) and the up projection in [f, 2f); the MLP goes on with
//   g = silu(gate) · up,  silu(x) = x · sigmoid(x).
// Elementwise fp32 over caller-owned buffers, split over the rank's threads (kernels/parallel).
#pragma once

#include <cstddef>

namespace ringscale::kernels::cpu {

/// g [rows, f] = silu(h1[:, :f]) · h1[:, f:] for h1 [rows, 2f]. OVERWRITES g (must not alias
/// h1). rows or f may be 0.
void swiglu_fwd(std::size_t rows, std::size_t f, const float* h1, float* g);

/// The backward given the forward's input h1 [rows, 2f] and dg [rows, f]: dh1 [rows, 2f]
/// OVERWRITTEN, d gate = dg · up · silu'(gate) with silu'(x) = s·(1 + x·(1 − s)), s =
/// sigmoid(x), and d up = dg · silu(gate). dh1 must not alias h1 or dg.
void swiglu_bwd(std::size_t rows, std::size_t f, const float* h1, const float* dg, float* dh1);

} // namespace ringscale::kernels::cpu
