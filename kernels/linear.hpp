// Fully connected layer y = x·Wᵀ + b in fp32: the shape and checks every backend shares. The
// fast CPU version is kernels/cpu/linear.hpp, the plain oracle kernels/reference/linear_ref.hpp,
// the CUDA twin kernels/cuda/dense.cuh; kernels/kernels.hpp runs it on an executor.
// All buffers are row-major, owned by the caller, and must not overlap unless stated.
#pragma once

#include <cstddef>

namespace ringscale::kernels {

/// Shape of one linear layer: x is [tokens, in], W is [out, in], b is [out], y is [tokens, out].
struct linear_shape {
    std::size_t tokens = 0;
    std::size_t in = 0;
    std::size_t out = 0;
};

/// Throws config_error unless every dimension is > 0 and fits a BLAS int.
void linear_check(const linear_shape& s);

/// FLOPs of one forward (2·tokens·in·out); the backward's dx + dW products are twice that.
double linear_fwd_flops(const linear_shape& s);

} // namespace ringscale::kernels
