// Merging one cuDNN call's output into a ring's running (O, LSE) (kernels/cuda/
// cudnn_attention.cpp): the call's rows only, its O read in the input type and widened, the
// merge exactly kernels::softmax_merge's (natural-log LSE, fp32). Declarations only, free of
// CUDA types.
#pragma once

#include "kernels/cuda/attention_fwd.cuh"

#include <cstdint>

namespace ringscale::kernels::cuda {

/// For each of `batch_heads` slabs of q_rows rows, rows [q0, q0 + q_len): merge (o_step of
/// `dtype`, stats) into (o, lse), all [batch_heads, q_rows, dim] / [batch_heads, q_rows].
/// DEVICE pointers, caller-owned; asynchronous on `stream` (a cudaStream_t).
void cudnn_merge_cuda(attn_dtype dtype, const void* o_step, const float* stats,
                      std::int64_t batch_heads, std::int64_t q_rows, std::int64_t q0,
                      std::int64_t q_len, std::int64_t dim, float* o, float* lse, void* stream);

} // namespace ringscale::kernels::cuda
