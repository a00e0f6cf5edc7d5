// The layers of the fp64 reference (kernels/model/reference_fp64) in double precision: the same
// math as the CPU kernels the training step runs (kernels/cpu: linear, rmsnorm, gelu,
// cross_entropy, adamw; the causal attention of kernels/reference/attention_ref), written out
// plainly. Every buffer is row-major double, caller-owned; the GEMMs go through cblas_dgemm,
// everything else is a plain loop. Which outputs are overwritten and which accumulated follows
// the fp32 kernels: dx overwritten, every parameter gradient accumulated.
#pragma once

#include "kernels/adamw.hpp"
#include "kernels/mask.hpp"

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::model::fp64 {

/// y[t, out] = x[t, in]·W[out, in]ᵀ + b[out]; b may be null. Overwrites y.
void linear_fwd(std::size_t t, std::size_t in, std::size_t out, const double* x, const double* w,
                const double* b, double* y);

/// Backward of linear_fwd given dy[t, out]: dx[t, in] = dy·W OVERWRITTEN (null: skipped);
/// dw[out, in] += dyᵀ·x and db[out] += Σ_t dy ACCUMULATED (db may be null).
void linear_bwd(std::size_t t, std::size_t in, std::size_t out, const double* x, const double* w,
                const double* dy, double* dx, double* dw, double* db);

/// y = x · inv · γ per row with inv[row] = 1 / sqrt(mean(x²) + eps). Overwrites y and inv.
void rmsnorm_fwd(std::size_t rows, std::size_t dim, double eps, const double* x,
                 const double* gamma, double* y, double* inv);

/// Backward of rmsnorm_fwd: dx OVERWRITTEN (may alias dy), dgamma += Σ_rows dy · x · inv.
void rmsnorm_bwd(std::size_t rows, std::size_t dim, const double* x, const double* gamma,
                 const double* inv, const double* dy, double* dx, double* dgamma);

/// GELU, tanh form (as kernels/cpu/gelu, with std::tanh): y = 0.5 x (1 + tanh(√(2/π)(x +
/// 0.044715 x³))). Overwrites y.
void gelu_fwd(std::size_t n, const double* x, double* y);

/// dx = dy · gelu'(x), OVERWRITTEN (may alias dy).
void gelu_bwd(std::size_t n, const double* x, const double* dy, double* dx);

/// One sequence's attention geometry: `rows` tokens at positions 0..rows-1, `heads` query heads
/// of `head_dim` reading `kv_heads` K/V heads (query head h reads K/V head h / (heads /
/// kv_heads); 0: as many as heads), causal and `mask` (kernels/mask.hpp), softmax scale
/// 1/sqrt(head_dim).
struct attention_geometry {
    std::size_t rows = 0, heads = 0, head_dim = 0, kv_heads = 0;
    mask_view mask;
    std::size_t kv_count() const { return kv_heads > 0 ? kv_heads : heads; }
    /// Columns of qkv: Q's heads·head_dim, then K's and V's kv_count()·head_dim each.
    std::size_t width() const { return (heads + 2 * kv_count()) * head_dim; }
};

/// Causal attention of one sequence, token-major: qkv [rows, g.width()] holds Q, K, V side by
/// side (head h at columns h·head_dim within each); o [rows, heads·head_dim] is OVERWRITTEN.
/// A row with no visible key gets 0.
void attention_fwd(const attention_geometry& g, const double* qkv, double* o);

/// Backward of attention_fwd given its output o and do [rows, heads·head_dim]: dqkv [rows,
/// g.width()] OVERWRITTEN. The softmax is recomputed.
void attention_bwd(const attention_geometry& g, const double* qkv, const double* o,
                   const double* d_o, double* dqkv);

/// SwiGLU: g [rows, f] = silu(h1[:, :f]) · h1[:, f:] for h1 [rows, 2f], OVERWRITTEN.
void swiglu_fwd(std::size_t rows, std::size_t f, const double* h1, double* g);

/// dh1 [rows, 2f] OVERWRITTEN from the forward's h1 and dg [rows, f] (no aliasing).
void swiglu_bwd(std::size_t rows, std::size_t f, const double* h1, const double* dg, double* dh1);

/// Σ_t (logsumexp(logits[t]) − logits[t, target[t]]) / total_tokens, and dlogits [t, vocab] =
/// (softmax − onehot) / total_tokens OVERWRITTEN (may alias logits). Targets are checked by
/// the caller (kernels::model::fill_batch makes them in range).
double cross_entropy_fwd_bwd(std::size_t t, std::size_t vocab, std::size_t total_tokens,
                             const double* logits, const std::int32_t* targets, double* dlogits);

/// One AdamW update of n elements as kernels/cpu/adamw_step, every operation in double (the
/// hyperparameters are the same fp32 values, widened).
void adamw_step(const adamw_params& hp, std::int64_t step, std::size_t n, double* param,
                const double* grad, double* m, double* v);

} // namespace ringscale::kernels::model::fp64
