// A case's identity (what the user chose) and run settings (how it was measured), as the
// results file stores them (src/base/results_schema.hpp) and as --resume keys them.
#pragma once

#include "src/engine/config.hpp"
#include "src/engine/job.hpp"

#include <string>

namespace ringscale {

struct scheduled_case;

/// The identity attributes of a case on the launch's ranks: job, variant (the user's
/// --variant where the job has one), the job's options as resolved without P, world_size,
/// nodes and ranks_per_node (the most on one node; uneven_nodes = 1 when the nodes differ),
/// device, comm, dtype, scaling and the threads requested (0 = node cores / ranks). Pure.
jobs::attr_map case_identity(const scheduled_case& pc, const launch_config& cfg,
                             const jobs::launch_info& launch);

/// The run attributes: warm-up and timed iterations, seed. Pure.
jobs::attr_map case_run_attrs(const launch_config& cfg);

/// Move what a job reports about its case (describe(), extras()) into identity, derived or
/// outcome: a value equal to the identity's is dropped, a P-independent resolution of an
/// option (dtype, kv_heads, seq_len) replaces the identity's, outcome names go to `outcome`,
/// the rest to `derived`. Pure.
void sort_job_attrs(const jobs::attr_map& from_job, jobs::attr_map& identity,
                    jobs::attr_map& derived, jobs::attr_map& outcome);

/// Stable key of identity + run (16 hex digits): equal keys are the same measurement. The
/// identity attributes added after files were written (schema::identity_defaults) are left
/// out while they hold what those files ran (one node, scope world ...), so --resume still
/// finds the cases of earlier files.
std::string case_key(const jobs::attr_map& identity, const jobs::attr_map& run);

/// case_key of a planned case (--resume; the same key the record carries). Pure.
std::string case_key(const scheduled_case& pc, const launch_config& cfg,
                     const jobs::launch_info& launch);

} // namespace ringscale
