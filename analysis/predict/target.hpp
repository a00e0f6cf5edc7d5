// What a prediction is asked for: a job and its identity at a placement, from a measured case
// (its own P; a file without topology is one node: nodes = 1, ranks_per_node = P) or from a
// template changed by `--at 'field=value,...'`. A target is priced by the job's cost model
// (schemes.hpp, train.hpp, or one collective).
#pragma once

#include "analysis/cases/cases.hpp"
#include "hardware.hpp"
#include "schemes.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis::predict {

struct target {
    std::string job, variant;
    std::map<std::string, std::string> identity; ///< identity fields as text (no world_size)
    placement where;
    bool topology_recorded = false; ///< nodes / ranks_per_node were in the identity
    std::string device_key;         ///< which compute figures price it
    /// How the measured case ran (threads and allowed cores per rank, means); absent for an
    /// --at target, whose threads follow the identity (0: node cores / ranks per node).
    std::optional<double> threads_used, affinity_cores;
    /// The cores the ranks of a node could use together (the union of their allowed cores: the
    /// machine group's load_cores, mean over ranks and launches); absent in older files and for
    /// an --at target. Ranks bound to the same cores (taskset on the launcher, a container's
    /// cpuset) share them although each was allowed them all.
    std::optional<double> node_cores_used;
    std::string label; ///< "job/variant k=v ..." without P
    const pooled_case* measured = nullptr;
};

/// The device key of a case: its identity's device and its file's device name.
std::string device_key(const case_data& c);

/// The target of a measured case.
target target_of(const pooled_case& c);

/// A collectives case's sendrecv peer distance (`shift`); 1 when absent or not a distance
/// between its ranks.
int sendrecv_shift(const target& t);

/// Threads each rank of `t` runs (as recorded, else the identity's; 0: node cores / ranks per
/// node, at least 1).
double rank_threads(const target& t, const figures& f);
/// The cores a rank's threads can use: its share of the node's cores, or its own cores when
/// it was bound to fewer than the node has; where the file says which cores the node's ranks
/// used together (node_cores_used), never more than an equal share of those.
double rank_share(const target& t, const figures& f);
/// Core-equivalents each rank of `t` computes on: 1 on a GPU (or f.fixed_width); on a CPU
/// 1 + thread_efficiency (threads - 1), capped by rank_share.
double rank_width(const target& t, const figures& f);

/// Price `t` with `f`. `only_rank` >= 0 prices that rank alone (calibration features).
step_prediction predict_target(const target& t, const figures& f, int only_rank = -1);

/// The collectives case's link level: its scope (intra|inter) or, without one, inter-node
/// when it spans several nodes.
link_level case_level(const target& t);

/// One `--at` field and its values ("nodes=1,2,4" gives three values).
struct at_field {
    std::string name;
    std::vector<std::string> values;
};

/// Parse `--at`: comma-separated items; `name=value` starts a field, a bare item adds a value
/// to the field before it. config_error (one line) on an unknown field or a malformed item.
std::vector<at_field> parse_at(const std::string& text);

/// Every template under every combination of the fields (fields a template's job does not
/// have are left out for it). With `hw`, targets take its device, dtype and ranks per node
/// unless --at sets them. config_error when a P is not a multiple of ranks_per_node, or a
/// field applies to no template.
std::vector<target> expand_at(const std::vector<target>& templates,
                              const std::vector<at_field>& fields, const hardware_profile* hw);

} // namespace ringscale::analysis::predict
