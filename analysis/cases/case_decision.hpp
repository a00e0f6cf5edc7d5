// The decision rule (analysis/statistics/decision.hpp) applied to two pooled cases: each
// launch's marks with their estimated effects (src/base/machine_marks.hpp), the case's
// compute/communication share, its launch-to-launch noise and the CI of the time ratio. Every
// consumer that ranks or compares cases (the launcher's closing table, crossover, compare,
// the report's plots, history) builds its inputs here and calls decide() once.
#pragma once

#include "cases.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/decision.hpp"
#include "src/base/machine_marks.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// The share of a launch's time spent computing: sum compute_s / (compute_s + comm_wait_s)
/// over its measured rows and ranks; NaN when the file has neither.
double compute_share(const case_data& c);

/// Each mark of one launch with its estimated effect: the rules its machine fields meet
/// (machine::machine_effects) and the sentinel's drift around it. A mark whose effect cannot
/// be estimated (the file's own `contended` flag without the fields, an older file's drift)
/// is unbounded (hi inf): it can account for any margin, as a mark always did. Empty when the
/// launch is not marked.
std::vector<machine::mark_effect> launch_effects(const case_data& c);

/// The effect `e` of a mark of launch `c` on its whole time: the phase's share from the case's
/// compute_s/comm_wait_s (machine::on_whole_time), except that on the CPU (device cpu, or not
/// recorded) the cores' state touches communication too (MPI over shared memory and TCP runs
/// on the same cores), so a machine mark there counts on the whole time. The sentinel's
/// probes keep their phase.
machine::mark_effect whole_time_effect(const case_data& c, const machine::mark_effect& e);

/// The largest effect of a side's marks on its whole time, and the reason of that mark.
struct side_mark {
    double effect = 1; ///< hi of machine::on_whole_time, over its launches; 1: none
    /// The smallest over its launches of each launch's largest mark at its estimate (factor;
    /// 1 when a launch is unmarked): the same mark on both sides nets to 1 (decision_inputs).
    double least = 1;
    std::string reason; ///< "" when none
    std::size_t marked = 0;
};

/// The side's marks over all of `p`'s launches, each on its launch's whole time
/// (whole_time_effect).
side_mark case_mark(const pooled_case& p);

/// The larger of two sides' launch-to-launch noise (SD of log launch medians); NaN when
/// either has fewer than 2 launches.
double case_noise(const pooled_case& a, const pooled_case& b);

/// The CI of t(b) / t(a) (medians): a two-level bootstrap (launches, then iterations) when
/// both have at least 2 launches, else over iterations.
interval ratio_ci(const pooled_case& a, const pooled_case& b, std::size_t replicates,
                  std::uint64_t seed, double level);

/// The rule's inputs for b against a, from their launches, marks and noise and the CI `ci`
/// of t(b) / t(a).
decision_inputs decision_for(const pooled_case& a, const pooled_case& b, const interval& ci,
                             double threshold);

/// decide(decision_for(...)).
decision_result decide_cases(const pooled_case& a, const pooled_case& b, const interval& ci,
                             double threshold);

} // namespace ringscale::analysis
