// CUDA softmax cross-entropy: the device twin of kernels/cpu/cross_entropy.hpp, fp32 logits with
// fp32 per-row softmax statistics (the CPU reference works in double) and a double sum over
// rows. Same normalisation: every value is divided by `total_tokens`, the token count of the
// whole global batch. Declarations only, free of CUDA types.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::cuda {

/// Forward. row_loss[t] = (logsumexp(logits[t, :]) − logits[t, targets[t]]) / total_tokens in
/// nats is OVERWRITTEN for t < tokens; when `loss` is not null, *loss (one device double) is
/// OVERWRITTEN with Σ_t row_loss[t], summed in double in a fixed order (deterministic), which
/// is kernels::cpu::cross_entropy_fwd's value. logits[tokens, vocab] row-major. All pointers are
/// DEVICE memory owned by the caller; asynchronous on `stream` (a cudaStream_t; nullptr:
/// default). Throws config_error for tokens == 0, vocab == 0 or total_tokens < tokens. Targets
/// are not read on the host: a target outside [0, vocab) yields NaN for its row (never an
/// out-of-bounds read).
void cross_entropy_fwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                            const float* logits, const std::int32_t* targets, float* row_loss,
                            double* loss, void* stream = nullptr);

/// Backward, as kernels::cpu::cross_entropy_bwd: dlogits[t, v] = dloss · (softmax(logits[t, :])[v]
/// − [v == targets[t]]) / total_tokens is OVERWRITTEN; dlogits may alias logits (in place). A bad
/// target makes its row NaN. DEVICE pointers, caller-owned; asynchronous on `stream`.
void cross_entropy_bwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                            const float* logits, const std::int32_t* targets, float* dlogits,
                            float dloss = 1.0f, void* stream = nullptr);

/// Both in one pass over each row (one softmax), as kernels::cpu::cross_entropy_fwd_bwd: writes
/// row_loss and *loss (may be null) as cross_entropy_fwd_cuda and dlogits as
/// cross_entropy_bwd_cuda with dloss = 1. dlogits may alias logits. DEVICE pointers,
/// caller-owned; asynchronous on `stream`.
void cross_entropy_fwd_bwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                                const float* logits, const std::int32_t* targets, float* row_loss,
                                double* loss, float* dlogits, void* stream = nullptr);

} // namespace ringscale::kernels::cuda
