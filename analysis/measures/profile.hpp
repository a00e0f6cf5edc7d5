// The per-operation breakdown of train_step --profile on: where a step's time goes, read from
// a case's profile_* attributes (seconds summed over the timed steps and call counts per
// operation, timed on one rank with the host clock).
#pragma once

#include "analysis/cases/results.hpp"
#include "analysis/presentation/table.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// One operation of a profiled step.
struct profile_op {
    std::string name;      ///< "qkv_fwd", ..., "other" (the step not in any op)
    double per_step_s = 0; ///< seconds per timed step
    double share = 0;      ///< fraction of the step (per_step_s / step_s)
    double calls_per_step = 0;
};

/// A case's breakdown, in the order the step runs the operations, then "other" (the step's
/// time outside every timed operation, clamped at 0). Empty when the case has no profile.
std::vector<profile_op> profile_ops(const case_data& c);

/// One row per (case, operation) for every profiled case; cases without a profile are left
/// out. Columns: case, op, time per step, % of step, calls per step.
table profile_table(const std::vector<case_data>& cases);

} // namespace ringscale::analysis
