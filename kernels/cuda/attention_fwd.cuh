// CUDA flash-attention forward over one K/V block: the device twin of
// kernels::cpu::attention_fwd_cpu (kernels/cpu/attention_cpu.hpp). Inputs are bf16 or fp16 in BHSD
// layout (Q [B,H,Sq,D], K and V [B,Hkv,Sk,D]), products run on Tensor Cores (mma.sync
// m16n8k16) with fp32 accumulation, and the result is merged into a running fp32 (O, LSE)
// so a ring calls it once per arriving block. head_dim 64 or 128, causal or not, GQA, and any
// mask of kernels/mask.hpp (sm80 kernel only; compile-checked, not yet run on a GPU).
// Declarations only, free of CUDA types.
//
// Accuracy against the double reference on the same (rounded) inputs, as
// tests/kernels/cuda/test_attention_gpu.cpp checks it, with u the unit roundoff of the input type
// (bf16 2^-8, fp16 2^-11): O carries the rounding of P to the input type before P V, so |O - O_ref|
// <= 2u * max|V| (bf16 7.8e-3, fp16 9.8e-4 for |V| <= 1); LSE stays fp32
// (|LSE - LSE_ref| <= 1e-3, -inf exact). Not yet confirmed on a GPU.
#pragma once

#include "kernels/attention_shape.hpp"

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::cuda {

/// Element type of Q, K, V (and dO): bfloat16 or IEEE half. Accumulation is always fp32.
enum class attn_dtype { bf16, fp16 };

/// Name of a dtype ("bf16", "fp16").
const char* to_string(attn_dtype dtype);

/// Global token positions of a call's query rows and key rows (causal visibility: key j is
/// visible to query i iff k_pos[j] <= q_pos[i]). Each side is a DEVICE array of int64, one
/// entry per row, sorted ascending; or, when its pointer is nullptr, the contiguous run
/// first, first + 1, ... computed in registers (the fast path: no position loads).
struct attention_positions {
    const std::int64_t* q_pos = nullptr;
    const std::int64_t* k_pos = nullptr;
    std::int64_t q_first = 0; ///< position of query row 0 when q_pos is nullptr
    std::int64_t k_first = 0; ///< position of key row 0 when k_pos is nullptr
};

/// dst[k] = src[k] rounded to nearest-even in `dtype`, for k < n. src fp32, dst 2 bytes per
/// element; DEVICE pointers, caller-owned; asynchronous on `stream` (a cudaStream_t).
void to_attn_dtype_cuda(attn_dtype dtype, std::size_t n, const float* src, void* dst,
                        void* stream = nullptr);

/// dst[k] = src[k] widened exactly to fp32, for k < n. DEVICE pointers; async on `stream`.
void from_attn_dtype_cuda(attn_dtype dtype, std::size_t n, const void* src, float* dst,
                          void* stream = nullptr);

/// x[k] = x[k] rounded to nearest-even in `dtype` and widened back to fp32, in place, for
/// k < n (a merge state kept in the dtype). DEVICE pointer, caller-owned; async on `stream`.
void round_values_cuda(attn_dtype dtype, std::size_t n, float* x, void* stream = nullptr);

/// Start a forward accumulator: O [B,H,Sq,D] = 0, LSE [B,H,Sq] = -inf (fp32, DEVICE,
/// caller-owned); asynchronous on `stream`.
void attention_fwd_init_cuda(const attention_shape& shape, float* o, float* lse,
                             void* stream = nullptr);

/// Forward over one K/V block of k_len rows, merged in place into the running fp32 O
/// [B,H,Sq,D] (normalised) and LSE [B,H,Sq] (natural log), as kernels::cpu::attention_fwd_cpu:
/// rows with no visible key in any block so far keep O = 0, LSE = -inf. Key tiles beyond the
/// last visible key are skipped, fully masked warp tiles skip their MMAs, partial ones are
/// masked per element. q, k, v are `dtype` elements, 16-byte aligned; o 8-byte aligned;
/// every pointer (positions included) is DEVICE memory owned by the caller. Asynchronous on
/// `stream` (a cudaStream_t; nullptr: default). Runs the sm90 kernels (attention_sm90.cuh) where
/// resolve_attention_path (attention_path.hpp) gives sm90, except under a mask beyond causal
/// (shape.mask), which always runs the sm80 kernel and reads the mask's arrays from
/// shape.mask's device copies (kernels/dev_mask.hpp). Throws config_error for a bad shape,
/// head_dim other than 64 or 128, misaligned pointers or a mask without its device arrays; a
/// cuda error if the launch fails.
void attention_fwd_cuda(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const attention_positions& pos, float* o,
                        float* lse, void* stream = nullptr);

} // namespace ringscale::kernels::cuda
