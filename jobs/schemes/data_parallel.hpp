// Data-parallel strategies of the training step: where parameters, gradients and AdamW
// states live and how gradients are reduced. Each is a kernels::model::unit_access, so the model
// reaches every unit's parameters and gradients through it and tells it when a unit's
// forward or backward is done (DDP posts bucket all-reduces, FSDP gathers and frees units).
//
// The reduction group is the whole world (dp x cp flattened): the cp ranks of one data-
// parallel replica hold different tokens of the same sequences, so their gradients are
// partial sums too, and every parameter is replicated over all P ranks. The cross-entropy is
// normalised by the GLOBAL token count, so gradients are SUMMED over the group, never
// averaged: the sum is exactly the single-rank whole-batch gradient. ZeRO-1 and FSDP shard
// over the same flattened group (as torchtitan shards FSDP over dp_shard x cp).
//
// Every buffer lives on the training context's executor and AdamW runs there; the group
// communicates those buffers (host MPI on the CPU; NCCL or staged MPI on CUDA), ordered after
// the compute that produced them as kernels/executor.hpp prescribes (jobs/schemes/device_exchange).
#pragma once

#include "comm/communicator.hpp"
#include "kernels/adamw.hpp"
#include "kernels/model/train_context.hpp"
#include "kernels/model/transformer.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs::schemes {

/// Per-rank bytes of the strategy's state.
struct dp_memory {
    double param_bytes = 0, grad_bytes = 0, optimizer_bytes = 0;
    double comm_buffer_bytes = 0; ///< reduce targets, send shards, FSDP gather buffers
};

/// How a strategy is configured.
struct dp_settings {
    std::string variant = "ddp";    ///< ddp | zero1 | fsdp
    double bucket_bytes = 25 << 20; ///< DDP bucket size
    bool prefetch = false;          ///< FSDP: gather the next unit while computing this one
    kernels::adamw_params hp;
};

class dp_strategy : public kernels::model::unit_access {
  public:
    /// Start from the full parameters `full` [layout.total()] (host memory, the same on every
    /// rank) with zero AdamW moments. Not collective.
    virtual void load(const float* full) = 0;
    /// Before the forward: clear gradients. Not collective.
    virtual void begin_step(phase_timer& timer) = 0;
    /// Collective: after the backward, finish the gradient reduction, apply AdamW step
    /// `step` (1-based) and make the parameters current for the next forward.
    virtual void finish_step(std::int64_t step, phase_timer& timer) = 0;
    /// Collective: the full parameters [total] on every rank, into host memory.
    virtual void gather_params(float* full) = 0;
    /// Collective: the full reduced gradient of the last step [total] on every rank, into
    /// host memory.
    virtual void gather_grads(float* full) = 0;
    virtual dp_memory memory() const = 0;
    /// Bytes of collective payload per step and rank (the buffers handed to the collectives).
    virtual double comm_bytes_per_step() const = 0;
};

/// A DDP gradient bucket: units [first_unit, last_unit] = flat elements [offset, offset+size).
struct grad_bucket {
    int first_unit = 0, last_unit = 0;
    std::size_t offset = 0, size = 0;
};

/// DDP buckets in the order backward fills them (head first): consecutive units grouped
/// until a bucket holds at least `bucket_bytes`. Every unit lies in exactly one bucket.
std::vector<grad_bucket> make_buckets(const kernels::model::param_layout& layout,
                                      double bucket_bytes);

/// A ZeRO-1 bucket: flat elements [start, start + size) of the gradient padded to a multiple
/// of the group, reduce-scattered once the backward of `first_unit` is done; rank r owns
/// [start + r size/P, start + (r+1) size/P), at `shard_offset` of its shard.
struct shard_bucket {
    int first_unit = 0;
    std::size_t start = 0, size = 0, shard_offset = 0;
};

/// ZeRO-1's buckets over `ranks`, in the order backward completes them (head first): the DDP
/// buckets of `bucket_bytes` with their bounds rounded up to multiples of `ranks` (a bucket
/// then ends where the next one's rounded start is, the head bucket at padded(total, ranks)),
/// so each splits evenly and is complete when its first unit is (the elements between a
/// unit's offset and the rounded bound belong to the bucket below). Empty buckets are dropped.
/// Shard offsets follow ascending `start`, so one rank's shard is the flat order.
std::vector<shard_bucket> make_shard_buckets(const kernels::model::param_layout& layout,
                                             double bucket_bytes, int ranks);

/// `n` rounded up to a multiple of `parts`.
std::size_t padded(std::size_t n, int parts);

/// The strategy `s.variant` over `group`, its state and its AdamW on `ctx`'s executor
/// (config_error for an unknown variant). `group` must take that executor's buffers.
std::unique_ptr<dp_strategy> make_dp_strategy(const dp_settings& s, comm::communicator& group,
                                              const kernels::model::param_layout& layout,
                                              kernels::model::train_context& ctx);

/// Preflight: the strategy's bytes per rank for a group of `ranks`, as memory() reports them.
double dp_state_bytes(const dp_settings& s, int ranks, const kernels::model::param_layout& layout);

} // namespace ringscale::jobs::schemes
