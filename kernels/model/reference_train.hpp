// The training step's data and its single-rank reference: seeded token batches for any
// (sequence, position) shard, and plain AdamW steps on a whole global batch with no
// communication (the oracle every distributed variant is validated against).
#pragma once

#include "kernels/adamw.hpp"
#include "kernels/model/params.hpp"
#include "kernels/model/train_context.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace ringscale::kernels::model {

/// ids/targets [nseq, positions.size()] of sequences first_seq .. first_seq+nseq-1 at the
/// global positions `positions` (token_at / target_at). Caller owns both buffers.
void fill_batch(std::uint64_t seed, std::int64_t vocab, std::int64_t first_seq, std::int64_t nseq,
                const std::vector<std::int64_t>& positions, std::int32_t* ids,
                std::int32_t* targets);

/// The single-rank reference: `steps` AdamW steps (step numbers 1..steps) of the model on the
/// global batch of `sequences` sequences of `seq_len` tokens, updating `params` [total] in
/// place. Gradients are accumulated one sequence at a time (the cross-entropy is normalised
/// by the global token count, so the sum is the whole-batch gradient) to keep activation
/// memory at one sequence. Returns each step's mean loss (nats); `first_grads` [total], when
/// not null, receives step 1's whole-batch gradient. `params` and `first_grads` are host
/// memory; the run computes on `ctx`'s executor (default: the CPU kernels), so on CUDA it is
/// the single-rank GPU run. Attention is causal and masked by `mask` (packed documents).
/// `micro_batch` (dividing `sequences`): sequences per forward and backward call, in order (1:
/// one at a time). Not collective.
std::vector<double> reference_train(const model_config& cfg, std::uint64_t data_seed,
                                    std::int64_t sequences, std::int64_t seq_len, int steps,
                                    const adamw_params& hp, float* params,
                                    float* first_grads = nullptr,
                                    train_context& ctx = default_cpu_context(),
                                    const mask_view& mask = {}, std::int64_t micro_batch = 1);

/// What reference_train_steps does beyond reference_train: the order and the grouping in
/// micro-batches in which the sequences' gradients are summed (a permutation of 0..sequences-1;
/// empty: in order), so a run can reorder the batch reduction (train_step --numerics' floor), and a
/// call after each step with the step number (1..), its loss and the parameters after the update
/// and the step's gradient [total] (host memory, valid during the call).
struct reference_hooks {
    std::vector<std::int64_t> order;
    /// Sequences per forward and backward (a micro-batch; dividing the batch): how the batch
    /// reduction groups its terms. 1 (the default) keeps activation memory at one sequence.
    std::int64_t micro_batch = 1;
    /// Not 0 (train_step --numerics' floor runs, any executor): the attention's sum over keys in
    /// seeded random blocks (local_attention_core::reorder_keys) and the GEMMs' weight-gradient sum
    /// over tokens in a seeded random order (mixed_precision::set_floor_reorder).
    std::uint64_t reorder_seed = 0;
    std::function<void(int step, double loss, const float* params, const float* grads)> on_step;
};

/// reference_train with `hooks`; `params` [total] updated in place. Not collective.
std::vector<double> reference_train_steps(const model_config& cfg, std::uint64_t data_seed,
                                          std::int64_t sequences, std::int64_t seq_len, int steps,
                                          const adamw_params& hp, float* params, train_context& ctx,
                                          const mask_view& mask, const reference_hooks& hooks);

} // namespace ringscale::kernels::model
