// The fp64 reference of the training step (train_step --numerics): the model of
// kernels/model/transformer (embedding, pre-norm blocks with causal attention, grouped-query
// when the model has fewer K/V heads, and a GELU or SwiGLU MLP, final RMSNorm, output
// projection, cross-entropy over the global batch) and AdamW, every value in double, on one rank
// with no communication. Written plainly against the layers of kernels/model/reference_fp64_ops,
// independent of the executor and of the fp32 kernels, so that what it computes is the exact math
// up to fp64 rounding: the reference a training run in fp32, bf16, fp16 or fp8 is measured against.
//
// Same model, data and optimizer as kernels::model::reference_train: the same flat parameter
// layout (param_layout), the fp32 initial parameters widened to double, the same seeded batch
// (fill_batch), each sequence's gradient summed in order, the same AdamW hyperparameters.
// Memory: the parameters, gradient and AdamW moments in double (4 x 8 bytes a parameter) and
// one sequence's activations (fp64_reference_bytes).
#pragma once

#include "kernels/adamw.hpp"
#include "kernels/mask.hpp"
#include "kernels/model/params.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace ringscale::kernels::model {

/// Called after each step's update with the step number (1..), its loss (nats), the
/// parameters after the update and the step's gradient (both [total], valid during the call).
using fp64_step_fn =
    std::function<void(int step, double loss, const double* params, const double* grads)>;

/// Bytes the fp64 reference allocates for `cfg` on sequences of `seq_len` tokens: the
/// parameters, gradient, AdamW moments and one sequence's activations and scratch. Pure.
double fp64_reference_bytes(const model_config& cfg, std::int64_t seq_len);

/// The whole global batch's loss and gradient at `params` [total] (double): `sequences`
/// sequences of `seq_len` tokens of `data_seed`'s data, one at a time; `grads` [total]
/// OVERWRITTEN. Returns the mean loss (nats). Attention causal and masked by `mask`.
/// config_error (one line) for a bad model or a size <= 0. Not collective.
double fp64_loss_and_grads(const model_config& cfg, std::uint64_t data_seed, std::int64_t sequences,
                           std::int64_t seq_len, const mask_view& mask, const double* params,
                           double* grads);

/// `steps` AdamW steps (1..steps) from `init` [total] (the fp32 initial parameters), in
/// double. Returns each step's loss; `on_step` (when set) sees every step; `final_params`
/// (when not null) receives the parameters after the last step. Not collective.
std::vector<double> reference_train_fp64(const model_config& cfg, std::uint64_t data_seed,
                                         std::int64_t sequences, std::int64_t seq_len, int steps,
                                         const adamw_params& hp, const float* init,
                                         const mask_view& mask, const fp64_step_fn& on_step = {},
                                         std::vector<double>* final_params = nullptr);

} // namespace ringscale::kernels::model
