// How much of each transfer hid under compute, from a case's --trace events (the definition of
// Holistic Trace Analysis: a transfer's time, the part of it during which its rank computed,
// the rest exposed), per ring step and rank, and the iteration's critical path: from the rank
// that finished last, back through each wait to the sender that posted late, to the rank and
// step that set the iteration's length.
#pragma once

#include "analysis/cases/results.hpp"
#include "src/base/trace_events.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// One kept iteration of a traced case: its events (every rank, the iteration's time base).
struct traced_iteration {
    int row = 0;        ///< the iteration's row in the case
    std::string reason; ///< "median" | "slowest"
    double skew_s = 0;  ///< the alignment's remaining skew seen
    double dropped = 0; ///< events the bounded buffer dropped over the case
    std::vector<trace::event> events;
    std::vector<int> rank_host; ///< [world] node index of each rank (empty: unknown)
};

/// The kept iterations of `c` (empty when the case has no trace). Pure.
std::vector<traced_iteration> traced_iterations(const case_data& c);

/// One ring step of one rank.
struct step_overlap {
    int rank = 0;
    int step = -1;           ///< -1: outside any step (a collective, a layer)
    double transfer_s = 0;   ///< the union of the step's transfers, posted to completed
    double overlapped_s = 0; ///< the part of it during which the rank computed
    double exposed_s = 0;    ///< transfer_s - overlapped_s
    double wait_s = 0;       ///< the rank's wait events in the step (time blocked)
    double compute_s = 0;    ///< the rank's compute events in the step
    double bytes = 0;        ///< bytes the rank sent and received in the step
};

/// One hop of the critical path: `rank` was held at `step` by `cause`.
struct critical_hop {
    int rank = 0;
    int step = -1;
    double at_s = 0;   ///< where the path reached this rank (iteration time base)
    std::string cause; ///< "compute" (it computed until then) | "transfer" (the link) | "sender"
};

/// The overlap summary of one iteration.
struct overlap_summary {
    std::vector<step_overlap> steps; ///< by rank, then step
    double length_s = 0;             ///< the iteration: the latest end of any event
    int last_rank = 0;               ///< the rank that finished last
    std::vector<critical_hop> path;  ///< from the last rank back to what set the length
    /// The step with the most exposed time (first such by rank, step); none when no transfer.
    const step_overlap* worst() const;
};

/// The summary of the events of one iteration. Pure.
overlap_summary summarize_overlap(const std::vector<trace::event>& events);

/// "rank 2 step 3: 1.20 ms of 1.50 ms transfer exposed (80%)", "" when no transfer. Pure.
std::string worst_step_text(const overlap_summary& s);
/// "rank 3 step 2 (waited for a late sender) <- rank 1 step 2 (compute)". Pure.
std::string critical_path_text(const overlap_summary& s);

/// The cases of `cases` with a trace whose label (case_label with P) contains `filter` (all
/// with a trace when empty), in file order.
std::vector<const case_data*> traced_cases(const std::vector<case_data>& cases,
                                           const std::string& filter);

/// Length of the union of [start, end) intervals. Pure.
double union_length(std::vector<std::pair<double, double>> spans);
/// Length of the intersection of the union of `a` with the union of `b`. Pure.
double intersection_length(std::vector<std::pair<double, double>> a,
                           std::vector<std::pair<double, double>> b);

} // namespace ringscale::analysis
