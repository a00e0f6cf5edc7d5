// train_step --numerics: each low-precision dtype's error budget against the fp64 reference. A
// defect that the same-dtype reference and the floor share (a GEMM kernel every run calls)
// cannot show against them; against fp64 it shows as error beyond what the dtype's rounding
// explains. In the spirit of TransformerEngine's per-dtype tolerances, derived from the dtype
// and the model's depth, fixed before any run.
//
// The quantity: the step-1 gradient's relative error against the fp64 reference's, the worst
// over the model's parameter tensors t (embedding; per block norm1, wqkv, wo, bo, norm2, w1, b1,
// w2, b2; final norm, wout, bout):
//   q = max_t ||g_t - g64_t|| / ||g64_t||   (tensors with ||g64_t|| = 0 skipped).
// Every run starts from the same parameters and data, so step 1's gradient carries no training
// chaos: the loss's gap to fp64 over many steps varied from seed to seed as much as a defect
// adds (training amplifies any rounding), the first gradient's does not. Per tensor, not over
// the whole gradient: the few widest weights hold most of its norm, and a defect in one GEMM
// (an input gradient feeding the layers below) is diluted in the whole but not in its tensors.
//
// The budget, B = u sqrt(G / ln 2), from:
//   u   the coarsest unit roundoff among the operands the dtype's products read: bf16 2^-8,
//       fp16 2^-11 (its attention inputs are fp16 too), fp8 2^-3 (E5M2 output gradients; the
//       E4M3 operands' 2^-4 is finer, so fp8's budget is an upper one);
//   s   = u / sqrt(8 ln 2) ~ 0.42u: the RMS relative error of one rounding to nearest, the
//       mantissa log-uniform (the error uniform over +-half an ulp, E[(2^e/x)^2] = 3 / (8 ln 2));
//   e1  = sqrt(2) s = u / sqrt(4 ln 2) ~ 0.60u: one product's RMS normwise relative error, both
//       operands rounded once, the rounding errors independent (summed over K terms, error and
//       value grow alike with sqrt(K), so e1 does not depend on K); fp32 accumulation adds
//       about sqrt(K) 2^-24, negligible (under 2^-16 for K <= 2^16);
//   G   = 2 (6L + 1) + 1: the products on a parameter's gradient path through L blocks: the
//       forward's 6L + 1 (QKV, Q·Kᵀ, P·V, out, up, down per block; the logits), as many input
//       gradients back, and the weight gradient's own;
//   a correct run's q ~ e1 sqrt(G) (independent errors in quadrature), and the budget is twice
//   that: B = 2 e1 sqrt(G) = u sqrt(G / ln 2). The factor 2 is the margin, not a measured
//   constant: correct runs are expected at half the budget.
// The planted defect the budget is tested with (tests/support/planted_gemm_defect: bf16's
// accumulator rounded to bf16 every 64-wide k-block) adds K / 64 roundings of a partial sum
// that grows like sqrt(k): s sqrt(K / 128) relative, u sqrt(K / (1024 ln 2)); twice the budget
// or more needs sqrt(K / (1024 ln 2)) >= 2 sqrt(G / ln 2), K >= 4096 G: at L = 1 (G = 15)
// K >= 61440, so the test's model has an FFN of 65536 (its down projection and the up
// projection's input gradient reduce over it).
// fp32 has no budget: its check against fp64 is the validation's.
// Measured (jobs/MEASUREMENTS.md, seeds 0..4): correct runs within half of it everywhere; the
// defect at 1.49x to 2.25x at K = 65536 (the estimate's 2.07x left no margin), and at twice it or
// more at K = 262144 (the estimate's 4.1x). train_step stores the quantity (fp64_grad_rel_err)
// and the budget (fp64_budget_grad_rel) with the case; ringscale-stats numerics judges them.
#pragma once

#include "kernels/model/mixed_precision.hpp"
#include "kernels/model/params.hpp"

#include <cstdint>
#include <string>

namespace ringscale::jobs {

/// What a dtype's budget depends on (the terms above).
struct fp64_budget {
    double u = 0;              ///< the dtype's unit roundoff; 0: no budget (why says why)
    std::int64_t products = 0; ///< G
    std::string why;           ///< without a budget: the reason (empty for fp32)
    /// Whether the dtype has a budget (not fp32).
    bool active() const { return u > 0; }
    /// B = u sqrt(G / ln 2): the most step-1 gradient relative error per tensor. Pure.
    double grad_rel() const;
    /// One line with the formula and its terms' values (or why there is none), recorded with
    /// the case.
    std::string describe() const;
};

/// The budget of dtype `t` for model `m`. Pure.
fp64_budget fp64_budget_of(const kernels::model::model_config& m, kernels::model::train_dtype t);

/// The budget of precision `p` for model `m`: its dtype's, except fp8's delayed recipe, which
/// has none (its step 1 quantises with scale 1, before any amax: underflow that no rounding
/// budget bounds; measured in MEASUREMENTS.md). Pure.
fp64_budget fp64_budget_of(const kernels::model::model_config& m,
                           const kernels::model::precision_config& p);

/// q: the worst over m's parameter tensors of ||g_t - g64_t|| / ||g64_t|| (g, g64 in the flat
/// layout; tensors whose fp64 gradient is 0 skipped; NaN in g: infinite). Pure.
double grad_rel_err(const kernels::model::model_config& m, const float* g, const double* g64);

} // namespace ringscale::jobs
