// Merging one cuDNN call's output into a ring's running (O, LSE) (kernels/cuda/
// cudnn_attention.cpp): the call's rows only, its O read in the input type and widened, the
// merge exactly kernels::softmax_merge's (natural-log LSE, fp32); and a backward call's
// gradient rows added into fp32. Declarations only, free of CUDA types.
#pragma once

#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/cudnn_support.hpp"

#include <cstdint>

namespace ringscale::kernels::cuda {

/// For each of `batch_heads` slabs of q_rows rows, rows [q0, q0 + q_len): merge (o_step of
/// `dtype`, stats) into (o, lse), all [batch_heads, q_rows, dim] / [batch_heads, q_rows].
/// DEVICE pointers, caller-owned; asynchronous on `stream` (a cudaStream_t).
void cudnn_merge_cuda(attn_dtype dtype, const void* o_step, const float* stats,
                      std::int64_t batch_heads, std::int64_t q_rows, std::int64_t q0,
                      std::int64_t q_len, std::int64_t dim, float* o, float* lse, void* stream);

/// cudnn_merge_cuda for an fp8 call: o_step holds E4M3 values, read times `descale` (O's, a
/// host value: kernels/cudnn_fp8.hpp).
void cudnn_merge_fp8_cuda(const void* o_step, float descale, const float* stats,
                          std::int64_t batch_heads, std::int64_t q_rows, std::int64_t q0,
                          std::int64_t q_len, std::int64_t dim, float* o, float* lse, void* stream);

/// For each of `slabs` slabs of `rows` rows, rows [r0, r0 + n) of `src` (`dtype`, [slabs, rows,
/// dim]) added into `dst` (fp32, same shape): one backward call's piece of dQ, dK or dV into
/// the step's fp32 gradients. DEVICE pointers; asynchronous on `stream`.
void cudnn_accumulate_cuda(attn_dtype dtype, const void* src, std::int64_t slabs, std::int64_t rows,
                           std::int64_t r0, std::int64_t n, std::int64_t dim, float* dst,
                           void* stream);

} // namespace ringscale::kernels::cuda
