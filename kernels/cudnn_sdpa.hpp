// cuDNN fused attention for one planned call of a ring step (kernels/cudnn_plan.hpp): SDPA
// forward with its softmax statistics (natural-log LSE, fp32) and SDPA backward from the final
// merged O and LSE, as TransformerEngine's ring does. bf16 and fp16; fp8 (E4M3) forward and
// backward calls on compute capability 9.0 and up with per-tensor scales and amax as cuDNN's
// graphs define them (kernels/cudnn_fp8.hpp).
// Each call's graph is built once per shape (kernels/cudnn_cache.hpp) and kept in a bounded
// cache; its build time is recorded as a set-up cost. Free of CUDA and cuDNN types: built in
// kernels/cuda/cudnn_sdpa.cpp where cuDNN and its frontend were found, else every call is
// "not compiled" (kernels/device_hooks/cudnn_hooks.cpp).
#pragma once

#include "kernels/attention_shape.hpp"
#include "kernels/cudnn_cache.hpp"
#include "kernels/cudnn_plan.hpp"
#include "kernels/cudnn_support.hpp"
#include "kernels/dev_buffer.hpp"
#include "kernels/elem.hpp"
#include "kernels/executor.hpp"

namespace ringscale::kernels::cuda {

/// One call: the step's tensors (shape.q_len and k_len are their rows; shape.scale the softmax
/// scale, 0: 1/sqrt(D)), their element type, and the piece and band (plan_cudnn_step).
struct cudnn_sdpa_call {
    attention_shape shape;
    attn_dtype_kind dtype = attn_dtype_kind::bf16;
    cudnn_call call;
};

/// Device pointers of a forward call. q, k, v: the whole step tensors (BHSD, `dtype`); the
/// call reads its piece through cudnn_q_view / cudnn_kv_view. o: a [B, H, q_len, D] buffer of
/// `dtype` (the call writes its rows); stats: fp32 [B, H, q_len] (the call writes its rows).
/// fp8 only: the per-tensor fp32 scalars (descale = 1 / scale of the input) and amax outputs.
struct cudnn_sdpa_fwd_args {
    const void* q = nullptr;
    const void* k = nullptr;
    const void* v = nullptr;
    void* o = nullptr;
    float* stats = nullptr;
    const float* descale_q = nullptr;
    const float* descale_k = nullptr;
    const float* descale_v = nullptr;
    const float* descale_s = nullptr;
    const float* scale_s = nullptr;
    const float* scale_o = nullptr;
    float* amax_s = nullptr;
    float* amax_o = nullptr;
};

/// Device pointers of a backward call: q, k, v, the final merged o and d_o (`dtype`, BHSD),
/// the final merged LSE (fp32 [B, H, q_len]); dq, dk, dv (`dtype`) receive the call's piece
/// of the gradients, overwritten: the caller adds each call's pieces into its accumulators
/// before the next call (two calls of a step may share rows).
struct cudnn_sdpa_bwd_args {
    const void* q = nullptr;
    const void* k = nullptr;
    const void* v = nullptr;
    const void* o = nullptr;
    const void* d_o = nullptr;
    const float* stats = nullptr;
    void* dq = nullptr;
    void* dk = nullptr;
    void* dv = nullptr;
    /// fp8 only (O, dO, dQ, dK, dV in E4M3): 12 fp32 scalars in the order of
    /// cudnn_fp8_backward_scalars, and 4 fp32 amax outputs: dQ, dK, dV, dP.
    const float* fp8_scalars = nullptr;
    float* fp8_amax = nullptr;
};

/// Run one forward call on `stream` (a cudaStream_t) of the current device. Throws cuda or
/// config errors (cuDNN's own message when it refuses the graph), not_compiled_error
/// without cuDNN.
void cudnn_sdpa_fwd(const cudnn_sdpa_call& c, const cudnn_sdpa_fwd_args& a, void* stream);

/// Run one backward call (bf16, fp16; fp8 on compute capability 9.0 and up, D = 128) on
/// `stream`; errors as cudnn_sdpa_fwd.
void cudnn_sdpa_bwd(const cudnn_sdpa_call& c, const cudnn_sdpa_bwd_args& a, void* stream);

/// One ring step's K/V block merged into the running (o, lse) (fp32 [B, H, Sq, D] and
/// [B, H, Sq]) through cuDNN, as the attention_fwd kernel does with ours: the step planned by
/// plan_cudnn_step from the host positions (kept per positions, so a ring plans each step
/// shape once), each call's O (type `e`) and statistics merged in fp32 by the ring's own
/// merge. e4m3 (fp8): Q, K, V stored scaled, read with the shape's descales, O written at V's
/// scale (kernels/cudnn_fp8.hpp). A step cuDNN cannot take is refused: config_error with the
/// reason.
void attention_fwd_cudnn(executor& exec, const attention_shape& s, elem e, const void* q,
                         const void* k, const void* v, const row_positions& qp,
                         const row_positions& kp, float* o, float* lse);

/// Keep the final merged O (fp32 [B, H, Sq, D]) in the input type `e` for the backward calls
/// of the rows whose output gradient is `d_o` (cuDNN's backward reads O): called where the
/// backward's delta is computed (attention_bwd_delta), before the ring's backward steps.
/// e4m3: O stored in E4M3 at V's scale (|O| <= max|V|); d_o is E4M3 at the shape's descale_do.
void cudnn_keep_output(executor& exec, const attention_shape& s, elem e, const float* o,
                       const void* d_o);

/// One ring step's backward through cuDNN, as the attention_bwd kernel with ours: the step's
/// calls (the forward's plan), each from Q, K, V, the kept O, d_o and the final merged LSE,
/// its dQ, dK, dV pieces added into the fp32 dq, dk, dv (which accumulate, as ours). e4m3:
/// cuDNN's fp8 backward (D = 128 on Hopper), each call's E4M3 outputs at scales that follow
/// the amaxes that call reported its last run: current scaling's from its third run on, the
/// earlier runs calibrate (kernels/cudnn_fp8.hpp). Refused
/// (config_error) when the kept O is not that of `d_o` or the step cannot be taken.
void attention_bwd_cudnn(executor& exec, const attention_shape& s, elem e, const void* q,
                         const void* k, const void* v, const void* d_o, const float* lse,
                         const row_positions& qp, const row_positions& kp, float* dq, float* dk,
                         float* dv);

/// This thread's graph caches so far (every device): builds, hits, evictions, build seconds.
cudnn_cache_stats cudnn_graph_cache_stats();

} // namespace ringscale::kernels::cuda
