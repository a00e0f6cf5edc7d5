// CUDA online-softmax merge: the device twin of kernels/softmax_merge.hpp (same semantics,
// fp32). Declarations only, free of CUDA types, so host code compiled by a C++ compiler can
// include this header.
#pragma once

#include <cstdint>

namespace ringscale::kernels::cuda {

/// Merge `rows` rows of [rows, dim] partials (o_a, lse_a) and (o_b, lse_b) into (o_out,
/// lse_out) exactly as kernels::softmax_merge: LSE in natural log, a row with both sides
/// -inf becomes zeros with LSE -inf. All pointers are DEVICE memory owned by the caller;
/// outputs may alias either input. Asynchronous on `stream` (a cudaStream_t, nullptr: the
/// default stream); throws a cuda error if the launch fails.
void softmax_merge_cuda(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b,
                        std::int64_t rows, std::int64_t dim, float* o_out, float* lse_out,
                        void* stream = nullptr);

} // namespace ringscale::kernels::cuda
