// Mixed-precision training emulated on the CPU (train_step --dtype): what a bf16, fp16 or fp8
// training step computes in, as the frameworks run it, on fp32 kernels.
//  - bf16, fp16: every GEMM's inputs (activations, weights, output gradients) and the attention
//    inputs (Q, K, V, dO) are rounded to the type; products accumulate in fp32 (the fp32 GEMM
//    on the rounded values), and parameters, gradients and AdamW moments stay fp32 (the master
//    weights). Norms, GELU, softmax and the loss compute in fp32, as autocast keeps them.
//  - fp16 also scales the loss (a static --loss-scale S): output gradients are rounded as
//    round(S * dy) / S, exactly what scaling the backward by S and unscaling the gradients
//    before the optimizer does when no fp32 value overflows. A value that overflows fp16
//    becomes inf and is counted (overflows()).
//  - fp8 (TransformerEngine's recipe): GEMM activations and weights in E4M3, output gradients
//    in E5M2, each tensor with its own scale s (the value is round(s * x) / s):
//    current scaling s = fp8_max / amax of the tensor itself; delayed scaling s = fp8_max /
//    max of the amax history (the last `history` steps' amaxes, 1 before any), the step's
//    amaxes reduced over every rank at the end of the step (end_step), as TE reduces them over
//    the fp8 group (the bookkeeping is kernels/model/fp8_scales, shared with the GPU's fp8
//    GEMMs). Attention runs in bf16, TE's default (fp8 attention is its opt-in).
// Rounding runs on host memory: the CPU executor. On a GPU the operands are cast on the device
// (kernels/lowp_gemm through train_context), the scales and overflow counts kept here.
#pragma once

#include "kernels/elem.hpp"
#include "kernels/model/fp8_scales.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ringscale::kernels::model {

/// The training dtypes: fp32 (no rounding), bf16, fp16, fp8.
enum class train_dtype { fp32, bf16, fp16, fp8 };

/// "fp32", "bf16", "fp16", "fp8".
const char* train_dtype_name(train_dtype t);
/// fp32|bf16|fp16|fp8 (also auto = fp32); config_error naming the choices otherwise.
train_dtype parse_train_dtype(const std::string& text);

/// What a case trains in.
struct precision_config {
    train_dtype dtype = train_dtype::fp32;
    fp8_scaling scaling = fp8_scaling::delayed;
    int amax_history = 1024; ///< delayed scaling: steps of amax kept (TE's default length)
    float loss_scale = 1024; ///< fp16: the static loss scale S
    /// One identity-like line: "fp32", "bf16", "fp16 (loss scale 1024)", "fp8 (delayed ...)".
    std::string describe() const;
};

/// The rounding state of one training context: the config, scratch for the rounded operands
/// and fp8's per-site amaxes. A site is one GEMM of the model (block l's QKV, out, MLP up, MLP
/// down as 4l..4l+3, the logits as 4L), the same on every rank. Not collective, not thread safe.
class mixed_precision {
  public:
    mixed_precision() = default;
    /// Set the config for a model of `layers` blocks (clears the amax history).
    void configure(const precision_config& cfg, std::int64_t layers);
    const precision_config& config() const { return m_cfg; }
    /// Whether anything is rounded (dtype other than fp32).
    bool active() const { return m_cfg.dtype != train_dtype::fp32; }

    /// `n` values of GEMM operand `op` at `site` as the dtype's GEMM reads them: `src` itself
    /// for fp32, else a rounded copy in scratch slot `op` (valid until the next call for `op`).
    const float* gemm_input(int site, gemm_operand op, const float* src, std::size_t n);
    /// fp8: record `amax` for GEMM operand `op` at `site` and return the scale its tensor is
    /// quantised with (current: from amax; delayed: from the history). What gemm_input does
    /// for fp8 on the host, for a device that rounds the tensor itself.
    float fp8_scale(int site, gemm_operand op, float amax);
    /// fp8's current recipe: `reduce` (when set) makes each activation's and output gradient's
    /// amax the max over the ranks that hold shards of its tensor (collective inside), before
    /// its scale is taken, as TransformerEngine's amax reduction over a sequence-parallel group
    /// (a weight is whole on each of them). Kept by configure().
    void set_amax_reduce(std::function<float(float)> reduce) { m_amax_reduce = std::move(reduce); }
    /// fp16: `n` more values overflowed (a device's casts count them).
    void count_overflows(std::uint64_t n) { m_overflows += n; }
    /// Round `n` attention inputs in place (bf16 for bf16 and fp8, fp16 for fp16).
    void round_attention(float* v, std::size_t n) const;
    /// End of a training step (delayed fp8): `reduce` (when set) takes the step's amaxes
    /// [sites * 3] and makes them the max over every rank (collective inside); they join the
    /// history. Nothing for other dtypes.
    void end_step(const std::function<void(float* amax, std::size_t n)>& reduce);
    /// train_step --numerics' floor runs: with a seed other than 0, row_order() reorders the
    /// GEMM backward's sum over tokens, seeded. 0 (the default): off.
    void set_floor_reorder(std::uint64_t seed) { m_reorder_seed = seed; }
    /// With the floor's reorder on: a seeded random order of `rows` rows (a new one each call),
    /// in which a GEMM's backward sums the weight gradient over tokens, as a sharded and
    /// all-reduced sum would. Empty when off.
    std::vector<std::size_t> row_order(std::size_t rows);
    /// Whether row_order() reorders (the floor's reorder is on); draws nothing.
    bool reorders() const { return m_reorder_seed != 0; }
    /// Values that overflowed the dtype (fp16: became inf) since configure().
    std::uint64_t overflows() const { return m_overflows; }
    /// The fp8 scale of (site, op) the next step uses (delayed), for tests.
    float delayed_scale(int site, gemm_operand op) const;
    /// fp8's scales and amaxes (configured for every dtype; used by fp8).
    const fp8_scales& scales() const { return m_scales; }

  private:
    precision_config m_cfg;
    fp8_scales m_scales;
    std::vector<float> m_scratch[3];
    std::uint64_t m_overflows = 0;
    std::uint64_t m_reorder_seed = 0, m_reorder_calls = 0;
    std::function<float(float)> m_amax_reduce;
};

} // namespace ringscale::kernels::model
