// CUDA flash-attention backward over one K/V block: the device twin of
// kernels::cpu::attention_bwd_cpu (kernels/cpu/attention_cpu.hpp), given the final LSE of the
// forward over all blocks and delta = rowsum(dO * O). Inputs bf16 or fp16 (attn_dtype), the five
// products on Tensor Cores (mma.sync m16n8k16) with fp32 accumulation, gradients fp32.
// head_dim 64 or 128, causal or not, GQA, any mask of kernels/mask.hpp (as the forward).
// Declarations only, free of CUDA types.
// attention_bwd_cuda runs the Hopper kernel instead (attention_sm90.cuh, attention_bwd_sm90:
// wgmma and TMA, same contract and rounding) where attention_path.hpp resolves to sm90 and
// that kernel takes the shape; the mma.sync kernel otherwise.
//
// Accuracy against the double reference on the same (rounded) inputs, as
// tests/kernels/cuda/test_attention_gpu.cpp checks it: P and dS are rounded to the input type (unit
// roundoff u: bf16 2^-8, fp16 2^-11) before their GEMMs, so |g - g_ref| <= 4u * max|g_ref|
// (bf16 1.6e-2, fp16 2.0e-3 relative to the largest entry) for each of dQ, dK, dV. Not yet
// confirmed on a GPU.
#pragma once

#include "kernels/cuda/attention_fwd.cuh"

#include <cstdint>

namespace ringscale::kernels::cuda {

/// delta [B,H,Sq] = rowsum(dO * O) over head_dim (fp32 accumulation), as
/// kernels::attention_bwd_delta: O fp32 (the forward's merge state), dO in `dtype`.
/// OVERWRITES delta. DEVICE pointers, caller-owned; asynchronous on `stream`.
void attention_bwd_delta_cuda(const attention_shape& shape, attn_dtype dtype, const float* o,
                              const void* d_o, float* delta, void* stream = nullptr);

/// Backward over one K/V block (k_len rows at positions pos.k_pos), given the final LSE
/// [B,H,Sq] (natural log; -inf rows get no gradient) and delta [B,H,Sq]: ADDS this block's
/// share to dQ [B,H,Sq,D] (atomically: several key tiles share a query row) and its
/// gradients to dK, dV [B,Hkv,Sk,D] (one writer per row: a block owns a key tile of one kv
/// head and loops over that head's query group). All accumulate, so zero them first, as for
/// kernels::cpu::attention_bwd_cpu. q, k, v, d_o are `dtype`, 16-byte aligned; lse, delta, dq, dk,
/// dv fp32, dq, dk, dv 8-byte aligned; every pointer is DEVICE memory owned by the caller.
/// Asynchronous on `stream`.
/// A mask beyond causal runs the sm80 kernel on its device arrays, as attention_fwd_cuda.
/// Throws config_error for a bad shape, head_dim other than 64 or 128, misaligned pointers or
/// a mask without its device arrays; a cuda error if the launch fails. dQ's float atomics make its
/// last bits depend on scheduling; dK and dV are deterministic.
void attention_bwd_cuda(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const void* d_o, const float* lse,
                        const float* delta, const attention_positions& pos, float* dq, float* dk,
                        float* dv, void* stream = nullptr);

} // namespace ringscale::kernels::cuda
