// Softmax cross-entropy over a small vocabulary with integer targets, fp32 logits.
// Normalisation: every call divides by `total_tokens`, the token count of the WHOLE global batch
// (all data-parallel ranks, all micro-batches), not by this shard's `tokens`. So the losses of
// the shards sum to the single-rank mean loss, and their gradients are the single-rank gradient's
// rows; a data-parallel sum all-reduce then needs no extra scaling.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::cpu {

/// Throws config_error unless tokens > 0, vocab > 0, total_tokens >= tokens and every
/// targets[t] lies in [0, vocab).
void cross_entropy_check(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                         const std::int32_t* targets);

/// Loss of this shard: Σ_t (logsumexp(logits[t, :]) − logits[t, targets[t]]) / total_tokens,
/// in nats, accumulated in double. logits[tokens, vocab] row-major; reads only.
double cross_entropy_fwd(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                         const float* logits, const std::int32_t* targets);

/// Gradient of the loss above times `dloss` (the upstream gradient, 1 for a plain loss):
/// dlogits[t, v] = dloss · (softmax(logits[t, :])[v] − [v == targets[t]]) / total_tokens.
/// OVERWRITES dlogits[tokens, vocab]; dlogits may alias logits (in place).
void cross_entropy_bwd(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                       const float* logits, const std::int32_t* targets, float* dlogits,
                       float dloss = 1.0f);

/// Both at once (one softmax per row): writes dlogits as cross_entropy_bwd with dloss = 1 and
/// returns the loss as cross_entropy_fwd. dlogits may alias logits.
double cross_entropy_fwd_bwd(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                             const float* logits, const std::int32_t* targets, float* dlogits);

} // namespace ringscale::kernels::cpu
