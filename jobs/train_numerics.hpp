// train_step --numerics STEPS: the training run followed over many steps against a single-rank
// reference and the floor that the order of floating-point reductions alone causes.
//
// For every step s = 1..STEPS the case records (datasets of the case's `numerics` group):
//  - loss, grad_norm (global L2 norm of the summed gradient), update_norm (L2 norm of the
//    parameter change), param_abs_err = max |p - p_ref| and param_rel_err = param_abs_err /
//    max |p_ref| (relative to the largest parameter: the task is learnable, losses and single
//    elements approach 0, so an element-wise relative error would mislead);
//  - ref_loss, ref_grad_norm, ref_update_norm: the reference, the single-rank run of the same
//    steps in the same dtype (kernels::model::reference_train on the whole global batch, one
//    sequence at a time);
//  - floor_loss, floor_grad_norm, floor_param_abs: the worst, step by step, of `floor_runs`
//    (>= 8) single-rank runs in the same dtype whose batch reduction is randomly reordered
//    (the sequences' gradients summed in a seeded random order, in micro-batches of each
//    divisor of the batch in turn: floor_micro_batch), against the reference. Each floor run
//    also really reorders the sums that a parallel configuration reorders inside a sequence:
//    the attention's over keys (2 to 4 key blocks at seeded random cuts, in a random order,
//    merged by log-sum-exp; in the backward the queries in blocks too, so dK and dV sum their
//    partials in another order) and every GEMM's weight gradient over tokens (the rows in a
//    seeded random order). Real reorders, not an error model: in bf16 a correct context-
//    parallel run differs from the reference by bf16 rounding flips, which a model of a few
//    fp32 ulps did not reproduce (DESIGN.md, "Training numerics").
//  - fp64_loss, fp64_grad_norm, fp64_update_norm: the single-rank fp64 reference of the same
//    steps (kernels/model/reference_fp64: forward, backward and AdamW in double from the same
//    initial parameters); param_fp64_abs and ref_param_fp64_abs: max |p - p_fp64| of the run and
//    of the same-dtype reference; floor_fp64_loss, floor_fp64_grad_norm, floor_fp64_param_abs:
//    the floor runs' worst against it. The verdict's baseline stays the same-dtype reference;
//    numerics_reference states both.
// Costs (seconds on rank 0): the fp64 reference, the same-dtype reference run, this rank's share
// of the floor runs (split over the ranks), and the distributed steps with their statistics.
#pragma once

#include "jobs/train_problem.hpp"
#include "jobs/train_validate.hpp"
#include "kernels/model/train_context.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ringscale::comm {
class communicator;
}

namespace ringscale::jobs {

/// The per-step series, each [steps], named as the datasets.
using numerics_series = std::map<std::string, std::vector<double>>;

/// The distributed run as the numerics mode drives it: one step returning the global loss,
/// the full gradient of the last step and the full parameters into host buffers [total]. All
/// collective over the world.
struct numerics_driver {
    std::function<double()> step;
    std::function<void(float*)> gather_grads;
    std::function<void(float*)> gather_params;
};

/// What the numerics run produced: the series, cost attributes, and the first
/// `pr.steps_validate` steps as the validation's trace (got) and reference (want).
struct numerics_result {
    numerics_series series;
    attr_map attrs;
    training_trace got, want;
};

/// Run `pr.numerics_steps` steps of `driver` from `init` and compare them with the fp64
/// reference, the same-dtype reference and the floor, the last two computed on `exec` (each
/// single-rank run in a fresh training context of pr's precision). Collective over `control` (the
/// floor's share and its reduction).
numerics_result run_numerics(const train_problem& pr, std::uint64_t seed,
                             const std::vector<float>& init, kernels::executor& exec,
                             const kernels::mask_view& mask, comm::communicator& control,
                             const numerics_driver& driver);

/// L2 norm of n values (double accumulation). Pure.
double l2_norm(const float* v, std::size_t n);

/// The micro-batch of floor run `run`: the divisors of `sequences` in turn (1, 2, ...), so
/// the runs group the batch reduction as the configurations do (a whole replica's batch at
/// once, a shard of it, one sequence at a time). Pure.
std::int64_t floor_micro_batch(int run, std::int64_t sequences);

/// A seeded random permutation of 0..n-1 (the floor run `run`'s reduction order). Pure.
std::vector<std::int64_t> reduction_order(std::uint64_t seed, int run, std::int64_t n);

} // namespace ringscale::jobs
