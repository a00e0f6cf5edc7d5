// What a train_step case is: the model, the global batch, the dp x cp grid and the
// data-parallel and context-parallel variants, read from the job's options with every
// bad-input rule, plus its FLOP, communication and memory figures for preflight and reports.
#pragma once

#include "comm/topology.hpp"
#include "kernels/mask_spec.hpp"

#include <memory>

#include "jobs/schemes/data_parallel.hpp"
#include "kernels/model/mixed_precision.hpp"
#include "kernels/model/params.hpp"
#include "src/engine/job.hpp"

#include <string>
#include <vector>

namespace ringscale::jobs {

/// One training case (global sizes, resolved grid).
struct train_problem {
    kernels::model::model_config model;
    std::int64_t seq_len = 512;
    std::int64_t global_tokens = 4096; ///< tokens per step over all ranks
    std::int64_t sequences = 8;        ///< global_tokens / seq_len
    std::string scaling = "strong";
    int dp = 1, cp = 1;
    std::string cp_variant = "ring"; ///< ring | allgather | ulysses | hybrid
    /// Ranks per Ulysses group: --cp-ulysses-degree resolved for the hybrid; cp for ulysses;
    /// 1 otherwise.
    int cp_ulysses_degree = 1;
    /// --cp-placement: each replica's cp ranks inside one node (node) or on different nodes.
    comm::group_placement cp_placement = comm::group_placement::node;
    schemes::dp_settings dp_set;
    int steps_validate = 3;
    bool tf32 = false;    ///< --tf32: GEMMs on TF32 tensor cores (cuda only)
    bool profile = false; ///< --profile: per-operation breakdown (host clock; CUDA events)
    /// --dtype, --fp8-recipe, --loss-scale: what the step computes in (emulated on the CPU).
    kernels::model::precision_config precision;
    int numerics_steps = 0;      ///< --numerics: steps followed against the reference (0: off)
    int floor_runs = 32;         ///< --numerics-floor-runs: reordered single-rank runs
    std::uint64_t data_seed = 0; ///< --data-seed: added to the launch's seed (--seeds sweeps it)
    int seeds = 1;               ///< --seeds: cases per configuration, data-seed .. +seeds-1
    /// --docs: documents packed into each sequence (attention within a document only), and
    /// the visible (query, key) pairs of one sequence; null without --docs.
    std::shared_ptr<const kernels::attention_mask> docs;
    std::int64_t doc_pairs = 0;

    std::int64_t local_sequences() const { return sequences / dp; }
    std::int64_t local_rows() const { return seq_len / cp; }
    /// Sequences per call of the single-rank reference (validation, --numerics): one, except
    /// with fp8's current recipe, whose scales come from each call's own amax: a data-parallel
    /// replica's (local_sequences), so at cp = 1 the reference quantises as the run does.
    std::int64_t reference_micro_batch() const {
        const bool current = precision.dtype == kernels::model::train_dtype::fp8 &&
                             precision.scaling == kernels::model::fp8_scaling::current;
        return current ? local_sequences() : 1;
    } /// The order the dp x cp grid is cut from: position
      /// i = d*cp + c holds replica d's cp rank
    /// c (comm::group_order by cp_placement; rank order when cp is 1 or every rank). Pure.
    std::vector<int> grid_order(const comm::node_layout& nodes) const;
    /// The warning when cp groups placed by node cannot all stay inside one node; "".
    std::string placement_note(const comm::node_layout& nodes) const;
    /// FLOPs per step, convention flop_convention().
    double flops_per_step() const;
    /// Bytes per step and rank: dp_comm_bytes_per_step() + cp_comm_bytes_per_step().
    double comm_bytes_per_step() const {
        return dp_comm_bytes_per_step() + cp_comm_bytes_per_step();
    }
    /// The dp strategy's collective payload per step (nccl-tests' size convention: an
    /// allreduce of N bytes counts N, whatever its algorithm sends).
    double dp_comm_bytes_per_step() const;
    /// The bytes this rank's cp core sends per step (all layers, forward and backward).
    double cp_comm_bytes_per_step() const;
    /// Peak host bytes per rank (state, activations, cp buffers, validation's reference).
    std::uint64_t bytes_per_rank(bool validate) const;
    /// --device cuda: peak device bytes per rank (state, activations, bf16 attention inputs,
    /// token ids, cp buffers; with `validate` the single-rank reference run on the same device;
    /// with --numerics its reference and floor runs instead, numerics_device_bytes).
    std::uint64_t device_bytes_per_rank(bool validate) const;
    /// FLOPs of the validation's reference run (all of its steps).
    double reference_flops() const { return flops_per_step() * steps_validate; }
};

/// The FLOP convention, as recorded in the attribute `flop_convention`.
const char* flop_convention();

/// The job's options, in sweep order.
std::vector<option_decl> train_options();
/// The options that make a case's identity: all of them (--cp-ulysses-degree only for the
/// hybrid, so cases of files written before it keep their identity).
std::vector<std::string> train_case_options(const train_problem& pr);

/// One case for `world_size` ranks from its typed parameters, checked against the job's
/// rules (the model's shape, the grid, the batch's divisibility); config_error (one line).
train_problem read_train_problem(const params& p, int world_size);

/// What the case cannot do on `device` ("cpu" | "cuda") whose GPU has compute capability
/// cc_major.cc_minor (0.0: not known, not checked): config_error (one line) for --numerics on
/// cuda, for --tf32 on on the CPU, and lowp_gpu_refusal's (jobs/train_lowp).
void check_train_device(const train_problem& pr, device_kind device, int cc_major, int cc_minor);

} // namespace ringscale::jobs
