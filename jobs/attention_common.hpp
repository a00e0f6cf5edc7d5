// What every attention job shares: its options, sequence presets, case planning with the
// divisibility and memory rules, seeded shards of the global Q/K/V/dO, gathering shards back
// into global tensors, and validation against the single-rank reference kernel.
#pragma once

#include "jobs/attention_fp8.hpp"
#include "kernels/attention_inputs.hpp"
#include "kernels/dev_buffer.hpp"
#include "kernels/dev_mask.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_spec.hpp"
#include "src/engine/job.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// One attention case's problem, as the user asked for it (global sizes).
struct attention_problem {
    std::int64_t seq_len = 0, batch = 1, heads = 8, kv_heads = 8, head_dim = 64;
    bool causal = true;
    bool backward = false; ///< --pass fwd+bwd
    kernels::layout layout = kernels::layout::zigzag;
    kernels::elem type = kernels::elem::f32; ///< --dtype of Q, K, V, dO (resolved, never auto)
    /// e4m3 only: the per-tensor scales of Q, K, V (jobs/attention_fp8.hpp), set at the
    /// case's set-up; the inputs are read as fp8_as_read(x, scale).
    fp8_tensor_scales fp8_scale{1, 1, 1};
    float fp8_scale_do = 1; ///< e4m3 with the backward: dO's, as the others
    kernels::input_kind inputs = kernels::input_kind::uniform; ///< --inputs
    /// --merge dtype: the running O is rounded to `type` after each block's merge (fp32: kept
    /// in fp32, as the kernels do).
    bool merge_in_dtype = false;
    /// The mask beyond causal (--window, --docs, --sparsity, --dilation) made concrete for
    /// seq_len, and its exact count of visible (query, key) pairs per head; null without one.
    std::shared_ptr<const kernels::attention_mask> mask;
    std::int64_t mask_pairs = 0;

    /// Shape of one rank's local problem: q_len = k_len = seq_len / ranks, with the mask.
    kernels::attention_shape local_shape(int ranks) const;
    /// The mask as kernels see it (no rule without one).
    kernels::mask_view mask_view() const;
    /// FLOPs per iteration of the whole job: 4·B·H·D per visible (query, key) pair forward,
    /// bwd 2.5 x fwd; without a mask DESIGN.md's 4·B·S²·H·D, halved when causal.
    double flops() const;
    /// The same without the mask (causal alone): what a dense kernel would compute.
    double dense_flops() const;
};

/// Options shared by the attention jobs, in sweep order (seq-len, seq-len-per-rank, seq-rule,
/// seq-preset, batch, heads, kv-heads, head-dim, causal, pass, layout, dtype, merge, inputs),
/// then the mask options.
std::vector<option_decl> attention_options();
/// The options that make an attention case's identity (with --seq-len-per-rank also it and
/// --seq-rule; the jobs add their own).
std::vector<std::string> attention_case_options();
/// Named sequence-length presets (--seq-preset).
const std::map<std::string, std::vector<std::string>>& seq_presets();

/// Weak scaling's global sequence length on `ranks` ranks from `per_rank` tokens
/// (--seq-len-per-rank): rule "memory" gives P*N; rule "work" gives N*sqrt(P) rounded to the
/// nearest multiple of the layout's chunk count (P; zigzag 2P), at least one multiple. Pure.
std::int64_t weak_seq_len(std::int64_t per_rank, const std::string& rule, kernels::layout layout,
                          int ranks);

/// The mask options (window, docs, sparsity, sparse-pattern, sparse-block, dilation), the
/// last of attention_options().
std::vector<option_decl> mask_options();

/// The mask options of a case (--window, --docs, --sparsity, --sparse-pattern, --sparse-block,
/// --dilation), each off when absent.
kernels::mask_spec read_mask_spec(const params& p);

/// One case's problem from its typed parameters, checked against the shape and mask rules (no
/// rank count): config_error.
attention_problem read_attention_problem(const params& p);

/// The largest over the mean of `pairs` (visible pairs per rank): 1 when balanced, NaN when
/// there is no work.
double work_imbalance(const std::vector<std::int64_t>& pairs);

/// Visible (query, key) pairs per head of each rank's queries against the whole sequence.
std::vector<std::int64_t> pairs_per_rank(const attention_problem& pr,
                                         const std::vector<std::vector<std::int64_t>>& positions);

/// Global positions of every rank's rows under pr.layout and the mask
/// (kernels/mask_layout.hpp): [ranks][seq_len / ranks].
std::vector<std::vector<std::int64_t>> attention_positions(const attention_problem& pr, int ranks);

/// --dtype for `device`: "auto" becomes fp32 on cpu and bf16 on cuda; a type the device's
/// attention kernels cannot take is a config_error naming the choices (fp8 resolves on cuda:
/// its other rules are checked per case, jobs/attention_fp8.hpp).
kernels::elem resolve_attention_dtype(const std::string& text, device_kind device);

/// Attributes every attention case records: dtype (float32|bfloat16|float16), mfu_dtype
/// (the peak to compare with: fp32|bf16|fp16), seq_len, kv_heads, flops_per_iter,
/// tokens_per_iter (B*S) and the FLOP convention; with a mask also its visible pairs per head,
/// the dense FLOPs and the compute reduction (dense / masked FLOPs).
attr_map attention_attrs(const attention_problem& pr);
/// attention_attrs plus work_imbalance of the ranks' `positions`.
attr_map attention_attrs(const attention_problem& pr,
                         const std::vector<std::vector<std::int64_t>>& positions);

/// The attention path a case runs where it is not the launch's (/meta attn_kernel): a mask
/// beyond causal (`masked`) on cuda runs the sm80 kernels unless --attn-kernel is cudnn (the
/// sm90 kernels take no mask), so `a` gets attn_kernel = "sm80" and attn_kernel_note saying
/// why; otherwise unchanged.
void add_masked_attn_kernel(attr_map& a, bool masked, device_kind device);

/// bf16 or fp16 on the CPU is emulated (kernels/cpu/attention_cpu.hpp): `a` gets
/// dtype_emulation = "emulated"; otherwise unchanged.
void add_dtype_emulation(attr_map& a, kernels::elem type, device_kind device);

/// A copy of host fp32 `values` on `dev` as `type` elements (rounded; exact when the values
/// came from fill_shard with the same type). e4m3 stores E4M3 of `scale`·x (encoded on the
/// host), x as the GPU reads it being fp8_as_read(x, scale).
kernels::dev_buffer<unsigned char> upload_as(kernels::executor& dev, kernels::elem type,
                                             const std::vector<float>& values, float scale = 1);

/// Plan a case for each point of the sweep, keeping attention_case_options() plus
/// `extra_options` as its values (a repeat of an earlier case is dropped);
/// `check(params, problem, P)` throws config_error when a case cannot run on P ranks (a preset
/// case is skipped instead); `bytes(params, problem, P, validate)` estimates peak bytes per
/// rank (both see the case's parameters for jobs whose rules depend on their own options, such
/// as context_parallel's --variant).
std::vector<case_plan> plan_attention_cases(
    const std::string& job, const std::vector<params>& sweep, const launch_info& launch,
    const std::vector<std::string>& extra_options,
    const std::function<void(const params&, const attention_problem&, int)>& check,
    const std::function<std::uint64_t(const params&, const attention_problem&, int, bool)>& bytes,
    const std::function<std::string(const params&)>& variant);

/// Peak bytes per rank of gathering the result into global tensors and of one reference
/// group during validation (what every attention job adds to its estimate when validating).
/// Bytes of the mask's arrays on a CUDA device (dev_mask: document starts, kept block
/// pairs); 0 without a mask.
std::uint64_t mask_device_bytes(const attention_problem& pr);
std::uint64_t attention_validation_bytes(const attention_problem& pr);

/// The seeded global tensors.
using tensor_id = kernels::attention_tensor;

/// Fill `out` [rows, head_dim] with rows `pos` of global tensor `id` at (batch b, head h), of
/// pr.inputs' kind (kernels/attention_inputs.hpp). Values are rounded to pr.type, so every
/// device and the reference see the same inputs.
void fill_head_rows(tensor_id id, std::uint64_t seed, const attention_problem& pr, std::int64_t b,
                    std::int64_t h, const std::vector<std::int64_t>& pos, float* out);

/// Fill `out` [batch, nheads, pos.size(), head_dim] with rows `pos` of global tensor `id`
/// (heads first_head .. first_head+nheads-1). Any rank computes any shard identically.
void fill_shard(tensor_id id, std::uint64_t seed, const attention_problem& pr,
                std::int64_t first_head, std::int64_t nheads, const std::vector<std::int64_t>& pos,
                float* out);

/// Collective: every rank's local [batch, nheads, rows, D] shard at `positions[rank]` ->
/// the global [batch, nheads, seq_len, D] tensor on every rank.
std::vector<float> gather_global(comm::communicator& c, const attention_problem& pr,
                                 std::int64_t nheads, const float* local,
                                 const std::vector<std::vector<std::int64_t>>& positions);

/// The distributed result, gathered into global tensors (dq/dk/dv empty for forward only).
struct attention_result {
    std::vector<float> o, dq, dk, dv;
};

/// Collective: compare `result` with the reference kernel on the same seeded inputs. The
/// reference work is split over ranks by (batch, kv-head group); errors are reduced.
validation validate_attention(comm::communicator& c, const attention_problem& pr,
                              std::uint64_t seed, const attention_result& result);

/// What the attention jobs report about a case's problem: seq, H/Hkv, D, causal, pass,
/// layout (from its plan).
std::vector<metric> attention_shape_metrics(const case_plan& plan);
/// ... and about its measurement: tokens per second, TFLOP/s per rank, the validation's
/// largest error (NaN when not validated) and, with --accuracy on (plan.show_accuracy), the
/// worst max relative error against fp64 (acc_*_max_rel).
std::vector<metric> attention_rate_metrics(const case_plan& plan, const results::case_record& rec);

} // namespace ringscale::jobs
