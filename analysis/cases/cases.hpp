// Case identity: two cases are "the same case" (pooled across launches, matched in
// comparisons) when their identity attributes (results schema, src/base/results_schema.hpp) agree;
// cases whose identities differ only in world_size form a scaling family.
#pragma once

#include "results.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ringscale::analysis {

using param_list = std::vector<std::pair<std::string, std::string>>;

/// The case's parameters: its identity attributes except job, variant and world_size, sorted
/// by name. Derived values, run settings and outcomes are never part of a case key.
param_list case_params(const case_data& c);

/// Canonical key "job|variant|P=4|a=1|b=x": equal keys are the same case.
std::string case_key(const case_data& c);

/// "job/variant a=1 b=x" with " P=4" appended when `with_p`.
std::string case_label(const case_data& c, bool with_p);

/// All launches of one case, pooled as repetitions.
struct pooled_case {
    std::string key;
    std::string job;
    std::string variant;
    int world_size = 0;
    int nodes = 1;          ///< the nodes the case ran on (1 in files without the topology)
    int ranks_per_node = 0; ///< the most ranks on one node (world_size in those files)
    std::string scaling;    ///< strong | weak (strong when unrecorded)
    param_list params;
    std::vector<const case_data*> launches; ///< status ok, with timings
    std::vector<const case_data*> not_ok;   ///< failed or skipped
    /// The distinct "threads=T cores=C" of its launches (largest threads and fewest allowed
    /// cores over ranks; empty where not recorded): more than one only when pooled on request.
    std::vector<std::string> resources;
    /// Set when launches of this case ran with other threads or cores and were kept apart:
    /// label() then ends with " [threads=T cores=C]".
    bool kept_apart = false;

    /// Measured iteration times of all launches, concatenated (launch order).
    std::vector<double> steps() const;
    /// True when any launch comes from an interrupted (incomplete) file.
    bool incomplete() const;
    /// "job/variant a=1 b=x" (no P).
    std::string label() const;
};

/// Marks: `p` with its marked launches (case_data::mark) left out (every other field
/// as is).
pooled_case without_marked(const pooled_case& p);

/// How many of `p`'s launches are marked and why, for a column or a note: "contended 2/3"
/// (`with_reason`: then ": " and the first one's reason); "" when none is.
std::string marks_text(const pooled_case& p, bool with_reason = false);

/// "threads=T cores=C" of one launch of a case (largest threads, fewest allowed cores over
/// its ranks), "" when the file did not record them.
std::string resource_signature(const case_data& c);

/// Pool cases by key, sorted by job, variant, parameters (numbers numerically), then P.
/// Launches of one key that ran with different threads or cores (resource_signature) are
/// kept apart as separate pooled cases unless `pool_resources`. The result refers into
/// `cases`, which must outlive it.
std::vector<pooled_case> pool_cases(const std::vector<case_data>& cases,
                                    bool pool_resources = false);

/// One line per case whose launches ran with different threads or cores: kept apart, or (when
/// they were pooled on request) pooled.
std::vector<std::string> resource_notes(const std::vector<pooled_case>& pooled);

/// Cases differing only in P (strong), or in P and parameters proportional to P (weak).
struct family {
    std::string label;
    std::string scaling;
    std::vector<std::string> scaled_params;  ///< weak scaling: parameters that grow with P
    std::vector<const pooled_case*> members; ///< ascending P, one per P, status ok
};

/// Scaling families among the pooled cases that have ok launches.
std::vector<family> find_families(const std::vector<pooled_case>& pooled);

/// Parameters with the same value in every given case (for a shared caption).
param_list common_params(const std::vector<const pooled_case*>& cases);

/// `label` without the " k=v" tokens of `common`.
std::string strip_params(std::string label, const param_list& common);

/// Numeric-aware ordering of two attribute texts (numbers compare by value).
bool text_less(const std::string& a, const std::string& b);

} // namespace ringscale::analysis
