// The results format's single owner: schema versions, dataset names and which group each
// case attribute belongs to. The launcher's writer, --resume, ringscale-stats' reader and the
// test fixture all use these names; src/base/RESULTS_SCHEMA.md documents them. No MPI.
//
// A case's attributes fall in four groups, stored as four attribute-only subgroups of
// /cases/<NNNN> in ringscale/2:
//   identity: what the user chose (job, variant, the job's options as given, world size,
//             device, comm, threads requested): equal identities are the same case;
//   run:      how it was measured (warm-up, iterations, seed): part of --resume's key only;
//   derived:  what the launcher computed from identity and P (dp, degrees, parameter
//             counts, FLOPs and bytes per iteration, conventions, threads actually used);
//   outcome:  what happened (status, error, validation, final loss).
#pragma once

#include "src/base/machine_schema.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ringscale::schema {

/// The version this build writes.
inline constexpr const char* version = "ringscale/2";
/// The older version that readers still accept (flat case attributes).
inline constexpr const char* version_1 = "ringscale/1";

enum class attr_group { identity, run, derived, outcome };

/// Every group, in storage order.
inline constexpr attr_group all_groups[] = {attr_group::identity, attr_group::run,
                                            attr_group::derived, attr_group::outcome};

/// Name of a group's subgroup under /cases/<NNNN> ("identity", "run", "derived", "outcome").
const char* group_name(attr_group g);

/// The group of an attribute a job reports about its case (describe(), extras()) in a
/// ringscale/2 file: outcome for validation details and losses, else derived. Pure.
attr_group job_attr_group(const std::string& name);

/// The group of a case attribute of a ringscale/1 file, where every attribute was stored flat
/// on the case group and derived values overwrote the user's (known table). Pure.
attr_group v1_attr_group(const std::string& name);

/// True for the identity attributes a ringscale/1 train_step case keeps: the launcher's own
/// and train_step's options (ringscale/1 recorded every option of the launch). Pure.
bool v1_train_step_identity(const std::string& name);

/// True for the identity attributes that name the scaling axes (world_size, and the topology
/// nodes and ranks_per_node): a family is the cases whose identities agree on everything else
/// (over P on one node, or over nodes at fixed ranks per node).
bool is_scaling_axis(const std::string& name);

/// Identity attributes added after files were written, with what a case without them ran:
/// {name, value} for the case of `job` on `world_size` ranks: nodes 1, ranks_per_node =
/// world_size, scope world (collectives), ulysses_placement node (context_parallel),
/// cp_placement node (train_step), merge fp32 and inputs uniform (the attention jobs). Integers
/// are given as text. Pure.
std::vector<std::pair<std::string, std::string>> identity_defaults(const std::string& job,
                                                                   long long world_size);

/// The values an enumerated identity attribute may hold (the launcher's choices, as it
/// stores them: "scope" -> world, intra, inter; placements, device, comm, layout, pass,
/// seq_rule, scaling, dp_variant, cp_variant, sparse_pattern), or nullptr for an attribute
/// that is not one of them. Readers drop a case whose value is not among them. Pure.
const std::vector<std::string>* allowed_values(const std::string& name);

/// Whether `schema` is a version readers accept (version or version_1).
bool readable(const std::string& schema);

// Every name of the file, in one place. The writer, --resume and the reader use these, never
// literals; src/base/RESULTS_SCHEMA.md says what each one means.

/// Attributes of the file's root group.
namespace root_attr {
inline constexpr const char* schema = "schema";
inline constexpr const char* created_utc = "created_utc";
inline constexpr const char* tool_version = "tool_version";
inline constexpr const char* git_commit = "git_commit";
inline constexpr const char* complete = "complete"; ///< int 0/1
/// 32 hex digits drawn when the launch created its file. With created_utc and git_commit it
/// identifies the launch, so a file seen twice (a link, a copy) counts once; files written
/// before it are identified by a hash of their bytes.
inline constexpr const char* launch_id = "launch_id";
} // namespace root_attr

/// Groups under the root, and the datasets of /meta and /ranks.
inline constexpr const char* meta_group = "meta";
inline constexpr const char* ranks_group = "ranks";
inline constexpr const char* cases_group = "cases";
inline constexpr const char* meta_cmdline = "cmdline"; ///< strings [argc]
inline constexpr const char* meta_hosts = "hosts";     ///< strings [numhosts]
/// strings [numhosts]: each host's network interfaces with their link speed from sysfs
/// ("eth0 10000 Mbit/s, ib0 unknown"; loopback left out; a veth reports its nominal speed,
/// not a tc shaping).
inline constexpr const char* meta_net_interfaces = "net_interfaces";
/// strings [numhosts], --device cuda: peer access between the host's visible GPUs from the
/// CUDA runtime ("0-1 access=1 perf_rank=0 atomics=1, ..."; "" with fewer than two GPUs).
inline constexpr const char* meta_gpu_peers = "gpu_peers";
inline constexpr const char* meta_config = "config";          ///< string: the resolved job file
inline constexpr const char* meta_resumed = "resumed";        ///< strings [cases] (--resume)
inline constexpr const char* ranks_host_index = "host_index"; ///< i32 [world]
inline constexpr const char* ranks_local_rank = "local_rank"; ///< i32 [world]
inline constexpr const char* ranks_gpu_index = "gpu_index";   ///< i32 [world], -1 without GPU
inline constexpr const char* ranks_gpu_uuid = "gpu_uuid";     ///< strings [world]
inline constexpr const char* ranks_gpu_pci_bus_id = "gpu_pci_bus_id"; ///< strings [world]

/// Attributes of /meta (Adiak names where one exists; device, threads_per_rank and
/// attn_kernel are attr:: names).
namespace meta_attr {
inline constexpr const char* user = "user";
inline constexpr const char* launchdate = "launchdate";
inline constexpr const char* cluster = "cluster";
inline constexpr const char* jobsize = "jobsize";
inline constexpr const char* numhosts = "numhosts";
inline constexpr const char* mpi_library = "mpi_library";
inline constexpr const char* mpi_library_version = "mpi_library_version";
inline constexpr const char* compiler = "compiler";
inline constexpr const char* compiler_version = "compiler_version";
inline constexpr const char* cxxflags = "cxxflags";
inline constexpr const char* executable = "executable";
inline constexpr const char* slurm_job_id = "slurm_job_id";
inline constexpr const char* device_name = "device_name";
/// OpenBLAS's kernels for this process ("SkylakeX", "Prescott"...). Older files lack it.
inline constexpr const char* blas_core = "blas_core";
/// The linear layers' GEMM on the CPU: "own" (AVX-512 tiles) or "openblas" (kernels/cpu/
/// linear_gemm.hpp). Older files lack it.
inline constexpr const char* linear_gemm = "linear_gemm";
inline constexpr const char* cuda_version = "cuda_version";
inline constexpr const char* nccl_version = "nccl_version";
/// Every launch: the cuDNN library loaded at run time ("9.19.0") and the cuDNN frontend
/// compiled in ("1.32.0"); "" for each where this ringscale was built without cuDNN. Older
/// files lack them.
inline constexpr const char* cudnn_version = "cudnn_version";
inline constexpr const char* cudnn_frontend_version = "cudnn_frontend_version";
inline constexpr const char* cuda_visible_devices = "cuda_visible_devices";
inline constexpr const char* timer = "timer";
inline constexpr const char* timer_resolution_s = "timer_resolution_s";
inline constexpr const char* timer_overhead_s = "timer_overhead_s";
inline constexpr const char* sync = "sync";
inline constexpr const char* gpu_name = "gpu_name";
inline constexpr const char* gpu_cc = "gpu_cc";
inline constexpr const char* gpu_sm_count = "gpu_sm_count";
inline constexpr const char* gpu_memory_bytes = "gpu_memory_bytes";
inline constexpr const char* gpu_max_sm_clock_mhz = "gpu_max_sm_clock_mhz";
inline constexpr const char* gpu_max_mem_clock_mhz = "gpu_max_mem_clock_mhz";
inline constexpr const char* gpu_mem_bus_width_bits = "gpu_mem_bus_width_bits";
inline constexpr const char* cuda_driver_version = "cuda_driver_version";
inline constexpr const char* cuda_runtime_version = "cuda_runtime_version";
inline constexpr const char* gpu_ranks_sharing = "gpu_ranks_sharing";
/// Open MPI's transport selection as set in its MCA parameters, read through MPI_T
/// ("pml=ob1; btl=tcp,self,vader; btl_tcp_if_include=10.0.0.0/24"; "^x" excludes x), or
/// "unknown" where the MPI library reports none.
inline constexpr const char* mpi_transport = "mpi_transport";
/// Prefix of a user's launch label (ringscale --label KEY=VALUE): /meta attribute
/// "label.KEY", text. Optional; not part of any case's identity.
inline constexpr const char* label_prefix = "label.";
/// The launcher's warnings about this launch's binding and oversubscription, one per line
/// ("" when none; absent in older files): what a report must say beside its efficiencies.
inline constexpr const char* warnings = "warnings";
} // namespace meta_attr

/// Case attributes every job's cases carry (identity, run, derived, outcome; DESIGN.md) and
/// the ones several jobs share. A job's own options are named after its options.
namespace attr {
// identity
inline constexpr const char* job = "job";
inline constexpr const char* variant = "variant";
inline constexpr const char* world_size = "world_size";
inline constexpr const char* device = "device";
inline constexpr const char* comm = "comm";
inline constexpr const char* dtype = "dtype";
inline constexpr const char* scaling = "scaling";
inline constexpr const char* threads = "threads";
inline constexpr const char* attn_kernel = "attn_kernel";
/// Why attn_kernel is what it is (--device cuda, /meta and the attention cases): "auto keeps
/// ringscale's own kernels ...", "cuDNN fused attention, asked for by name", the mask that
/// sent a case to sm80. Older files lack it.
inline constexpr const char* attn_kernel_note = "attn_kernel_note";
/// --attn-kernel cudnn: the cuDNN graphs a case built (one per call shape, in its warm-up,
/// outside the timed iterations) and the host seconds that took: a set-up cost.
inline constexpr const char* cudnn_graphs_built = "cudnn_graphs_built";
inline constexpr const char* cudnn_graph_build_s = "cudnn_graph_build_s";
inline constexpr const char* seq_len = "seq_len";
inline constexpr const char* seq_len_per_rank = "seq_len_per_rank";
inline constexpr const char* kv_heads = "kv_heads";
/// The attention mask options (absent when not given; sparse_* only with sparsity).
inline constexpr const char* window = "window";
inline constexpr const char* docs = "docs";
inline constexpr const char* sparsity = "sparsity";
inline constexpr const char* sparse_pattern = "sparse_pattern";
inline constexpr const char* sparse_block = "sparse_block";
inline constexpr const char* dilation = "dilation";
// job options ringscale-stats reads (named after the options, "-" as "_")
inline constexpr const char* op = "op";
inline constexpr const char* seq_rule = "seq_rule";
inline constexpr const char* layout = "layout";
inline constexpr const char* overlap = "overlap";
// train_step options ringscale/1 files carry (v1_train_step_identity)
inline constexpr const char* layers = "layers";
inline constexpr const char* hidden = "hidden";
inline constexpr const char* heads = "heads";
inline constexpr const char* vocab = "vocab";
inline constexpr const char* train_seq_len = "train_seq_len";
inline constexpr const char* tokens = "tokens";
inline constexpr const char* dp_variant = "dp_variant";
inline constexpr const char* cp_variant = "cp_variant";
inline constexpr const char* bucket_mb = "bucket_mb";
inline constexpr const char* prefetch = "prefetch";
inline constexpr const char* lr = "lr";
inline constexpr const char* steps_validate = "steps_validate";
/// Where the case ran: nodes, and the most ranks on one node (every node's count unless
/// uneven_nodes = 1, present only then). Files without them ran on one node.
inline constexpr const char* nodes = "nodes";
inline constexpr const char* ranks_per_node = "ranks_per_node";
inline constexpr const char* uneven_nodes = "uneven_nodes";
/// collectives --scope (world | intra | inter); files without it: world.
inline constexpr const char* scope = "scope";
/// context_parallel --ulysses-placement, train_step --cp-placement (node | across); files
/// without them: node.
inline constexpr const char* ulysses_placement = "ulysses_placement";
inline constexpr const char* cp_placement = "cp_placement";
// run
inline constexpr const char* warmup = "warmup";
inline constexpr const char* iterations = "iterations";
inline constexpr const char* seed = "seed";
inline constexpr const char* repeat = "repeat";
// derived
inline constexpr const char* flops_per_iter = "flops_per_iter";
inline constexpr const char* comm_bytes_per_iter = "comm_bytes_per_iter";
inline constexpr const char* threads_per_rank = "threads_per_rank";
inline constexpr const char* variant_label = "variant_label";
inline constexpr const char* bytes = "bytes";
inline constexpr const char* count = "count";
inline constexpr const char* busbw_factor = "busbw_factor";
/// collectives: ranks in each communicator of the scope, and how many ran side by side.
inline constexpr const char* scope_ranks = "scope_ranks";
inline constexpr const char* scope_groups = "scope_groups";
inline constexpr const char* tokens_per_iter = "tokens_per_iter";
inline constexpr const char* mfu_dtype = "mfu_dtype";
/// train_step: which tensors are stored in which dtype, and the gradients' reduction dtype.
inline constexpr const char* train_storage = "train_storage";
inline constexpr const char* flop_convention = "flop_convention";
/// With an attention mask: visible (query, key) pairs per head, the FLOPs a dense kernel
/// (causal alone) would compute, and their ratio to flops_per_iter (the compute reduction).
inline constexpr const char* visible_pairs = "visible_pairs";
inline constexpr const char* dense_flops_per_iter = "dense_flops_per_iter";
inline constexpr const char* compute_reduction = "compute_reduction";
/// Attention jobs: the largest rank's visible pairs over the mean (1 = balanced).
inline constexpr const char* work_imbalance = "work_imbalance";
inline constexpr const char* memory_convention = "memory_convention";
inline constexpr const char* dp = "dp";
inline constexpr const char* cp = "cp";
inline constexpr const char* sequences = "sequences";
inline constexpr const char* parameters = "parameters";
inline constexpr const char* cp_layout = "cp_layout";
inline constexpr const char* ulysses_degree = "ulysses_degree";
inline constexpr const char* ring_degree = "ring_degree";
inline constexpr const char* gathered_kv_bytes = "gathered_kv_bytes";
inline constexpr const char* precision = "precision";
inline constexpr const char* tf32 = "tf32";
/// train_step --profile: profile_<op>_s and profile_<op>_calls per operation, and these.
inline constexpr const char* profile_prefix = "profile_";
inline constexpr const char* profile_ops = "profile_ops";
inline constexpr const char* profile_steps = "profile_steps";
inline constexpr const char* profile_step_s = "profile_step_s";
inline constexpr const char* profile_rank = "profile_rank";
inline constexpr const char* profile_dropped = "profile_dropped";
// outcome
inline constexpr const char* status = "status";
inline constexpr const char* error = "error";
inline constexpr const char* validated = "validated";
inline constexpr const char* max_abs_err = "max_abs_err";
inline constexpr const char* tolerance = "tolerance";
inline constexpr const char* wrong_elements = "wrong_elements";
inline constexpr const char* final_loss = "final_loss";
/// "instructions, cycles", or "not supported: REASON" (the kernel refused perf_event_open).
inline constexpr const char* hw_counters = "hw_counters";
/// Prefix of train_step's validation details (validate_grad_max_abs_err, ...): outcome.
inline constexpr const char* validate_prefix = "validate_";
inline constexpr const char* validate_steps = "validate_steps";
inline constexpr const char* validate_grad_max_abs_err = "validate_grad_max_abs_err";
inline constexpr const char* validate_grad_tolerance = "validate_grad_tolerance";
inline constexpr const char* validate_param_max_abs_err = "validate_param_max_abs_err";
inline constexpr const char* validate_param_tolerance = "validate_param_tolerance";
inline constexpr const char* validate_loss_max_abs_err = "validate_loss_max_abs_err";
inline constexpr const char* validate_loss_tolerance = "validate_loss_tolerance";
inline constexpr const char* validate_param_outliers = "validate_param_outliers";
inline constexpr const char* validate_param_outliers_allowed = "validate_param_outliers_allowed";
/// The accuracy against fp64 of an attention case (optional; DESIGN.md, "Accuracy against
/// fp64"): every name starting with this prefix is outcome. acc_<tensor>_max_rel and
/// acc_<tensor>_rms_rel of the distributed result, acc_single_<tensor>_... of the single-rank
/// computation (acc_attr), tensors o, lse, dq, dk, dv; and these.
inline constexpr const char* acc_prefix = "acc_";
inline constexpr const char* acc_query_rows = "acc_query_rows";   ///< sampled per (batch, head)
inline constexpr const char* acc_key_rows = "acc_key_rows";       ///< per (batch, kv head); 0: fwd
inline constexpr const char* acc_reference_s = "acc_reference_s"; ///< the measurement's time
// Identity options of the attention jobs added with the accuracy study (absent in older
// files: what those ran, identity_defaults).
inline constexpr const char* merge = "merge"; ///< fp32 | dtype
/// derived: "emulated" where a bf16/fp16 attention case ran on the CPU (its kernels emulate
/// the CUDA kernels' rounding; DESIGN.md, "Emulated dtypes").
inline constexpr const char* dtype_emulation = "dtype_emulation";
inline constexpr const char* inputs = "inputs"; ///< uniform | outliers
/// Measured on a contended machine (int 0/1; absent in older files) and why (text, "" when
/// not): other processes on the ranks' cores, stolen time, GPU throttling or other processes
/// on the GPU (src/base/machine_marks.hpp).
inline constexpr const char* contended = "contended";
inline constexpr const char* contention = "contention";

} // namespace attr

/// The tensors an accuracy measurement names (acc_attr), in order.
inline constexpr const char* acc_tensors[] = {"o", "lse", "dq", "dk", "dv"};

/// "acc_" + who + tensor + "_" + stat: who "" (the distributed result) or "single_", stat
/// "max_rel" or "rms_rel" (acc_o_max_rel, acc_single_dk_rms_rel).
std::string acc_attr(const std::string& who, const std::string& tensor, const std::string& stat);

/// Values of attr::status.
namespace status {
inline constexpr const char* ok = "ok";
inline constexpr const char* failed = "failed";
inline constexpr const char* skipped = "skipped";
} // namespace status

// Dataset names of a case (units in the names; shapes in RESULTS_SCHEMA.md).
inline constexpr const char* ds_time_s = "time_s";                       ///< f64 [rows, world]
inline constexpr const char* ds_compute_s = "compute_s";                 ///< f64 [rows, world]
inline constexpr const char* ds_comm_wait_s = "comm_wait_s";             ///< f64 [rows, world]
inline constexpr const char* ds_is_warmup = "is_warmup";                 ///< u8 [rows]
inline constexpr const char* ds_peak_host_bytes = "peak_host_bytes";     ///< u64 [world]
inline constexpr const char* ds_peak_device_bytes = "peak_device_bytes"; ///< u64 [world]
inline constexpr const char* ds_peak_rss_bytes = "peak_rss_bytes";       ///< u64 [world]
inline constexpr const char* ds_threads = "threads";                     ///< i32 [world] (v2)
inline constexpr const char* ds_affinity_cores = "affinity_cores";       ///< i32 [world] (v2)
inline constexpr const char* ds_affinity_list = "affinity_list";         ///< str [world] (v2)
inline constexpr const char* ds_loss = "loss";                           ///< f64 [rows]
// Beside time_s, each f64 [rows, world] (absent in older files): the CPU time of the rank's
// whole process (every thread's) over the step and in its compute and comm_wait phases, and
// the user-space hardware counts over the step (NaN where attr::hw_counters says not
// supported).
inline constexpr const char* ds_cpu_s = "cpu_s";
inline constexpr const char* ds_compute_cpu_s = "compute_cpu_s";
inline constexpr const char* ds_comm_wait_cpu_s = "comm_wait_cpu_s";
inline constexpr const char* ds_instructions = "instructions";
inline constexpr const char* ds_cycles = "cycles";
/// The datasets above, in that order.
inline constexpr const char* const cpu_datasets[] = {ds_cpu_s, ds_compute_cpu_s, ds_comm_wait_cpu_s,
                                                     ds_instructions, ds_cycles};
inline constexpr const char* ds_case_key = "case_key"; ///< str scalar

// train_step's per-rank memory categories (f64 [world], bytes).
inline constexpr const char* ds_param_bytes = "param_bytes";
inline constexpr const char* ds_grad_bytes = "grad_bytes";
inline constexpr const char* ds_optimizer_bytes = "optimizer_bytes";
inline constexpr const char* ds_activation_bytes = "activation_bytes";
inline constexpr const char* ds_comm_buffer_bytes = "comm_buffer_bytes";
inline constexpr const char* ds_step_peak_device_bytes = "step_peak_device_bytes";

/// Per-rank memory categories that train_step records (f64 [world], bytes).
const std::vector<std::string>& training_memory_datasets();

} // namespace ringscale::schema
