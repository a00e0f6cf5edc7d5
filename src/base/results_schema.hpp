// The results format's single owner: schema versions, dataset names and which group each
// case attribute belongs to. The launcher's writer, --resume, ringscale-stats' reader and the
// test fixture all use these names; DESIGN.md ("Results file") documents them. No MPI.
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

#include <string>
#include <vector>

namespace ringscale::schema {

/// The version this build writes.
inline constexpr const char* version = "ringscale/2";
/// The older version that readers still accept (flat case attributes).
inline constexpr const char* version_1 = "ringscale/1";

/// Root attribute: 32 hex digits drawn when the launch created its file. With created_utc
/// and git_commit it identifies the launch, so a file seen twice (a link, a copy) counts
/// once; files written before it are identified by a hash of their bytes.
inline constexpr const char* root_launch_id = "launch_id";

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

/// True for the identity attributes that name the scaling axis (world_size): a family is
/// the cases whose identities agree on everything else.
bool is_scaling_axis(const std::string& name);

/// Whether `schema` is a version readers accept (version or version_1).
bool readable(const std::string& schema);

// Dataset names of a case (units in the names; shapes in DESIGN.md).
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
inline constexpr const char* ds_case_key = "case_key";                   ///< str scalar

/// Per-rank memory categories that train_step records (f64 [world], bytes).
const std::vector<std::string>& training_memory_datasets();

} // namespace ringscale::schema
