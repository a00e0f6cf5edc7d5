// Host declarations of the Hopper (sm_90a) attention kernels: wgmma Tensor Core MMAs on
// shared-memory tiles brought in by TMA through mbarrier pipelines, a producer warpgroup and
// two consumer warpgroups (FlashAttention-3's structure, written in raw PTX). Same contracts
// as the sm80 kernels they stand in for (attention_fwd.cuh, attention_bwd.cuh); chosen at
// run time by attention_path.hpp. Free of CUDA types. Compile-checked; NOT YET RUN ON A GPU.
#pragma once

#include "kernels/cuda/attention_fwd.cuh"

namespace ringscale::kernels::cuda {

/// The sm90 forward's consumer schedule: true (default) overlaps the softmax of one key tile
/// with the P V product of the previous one; false (environment RINGSCALE_SM90_OVERLAP=0)
/// runs each tile's steps in turn. Read at every call.
bool sm90_overlap();

/// True when the sm90 forward takes `shape` (head_dim 64 or 128, batch * heads <= 65535,
/// lengths below 2^31: TMA's int32 coordinates; no mask beyond causal); otherwise
/// attention_fwd_cuda runs sm80.
bool attention_fwd_sm90_supports(const attention_shape& shape);

/// attention_fwd_cuda on the sm90 path: forward over one K/V block merged into the running
/// fp32 (O, LSE), same arguments and semantics (attention_fwd.cuh). Needs a compute
/// capability 9.0 device and a build with the sm_90a target: throws config_error otherwise,
/// and for what attention_fwd_cuda refuses.
void attention_fwd_sm90(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const attention_positions& pos, float* o,
                        float* lse, void* stream = nullptr);

/// True when the sm90 backward takes `shape` (head_dim 64 or 128, batch * kv_heads <= 65535,
/// lengths and batch * heads below 2^31: TMA's int32 coordinates; no mask beyond causal).
bool attention_bwd_sm90_supports(const attention_shape& shape);

/// attention_bwd_cuda on the sm90 path: backward over one K/V block, ADDING to dQ (atomics),
/// dK and dV, same arguments and semantics (attention_bwd.cuh). Needs a compute capability
/// 9.0 device and a build with the sm_90a target: throws config_error otherwise, for a shape
/// attention_bwd_sm90_supports refuses, and for what attention_bwd_cuda refuses.
void attention_bwd_sm90(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const void* d_o, const float* lse,
                        const float* delta, const attention_positions& pos, float* dq, float* dk,
                        float* dv, void* stream = nullptr);

} // namespace ringscale::kernels::cuda
