// A compute phase judged on its CPU time where others' load stretched its wall time: the CPU
// time of a rank's compute phases (compute_cpu_s, every thread's) counts the work done, not
// the time the rank waited for a core, so a launch beside a busy loop is as slow as a quiet
// one there. Used for a change of a compute-phase series (compute at least half of the step)
// whose launches on either side are marked contended by others' load. Oversubscription (the
// ranks' own threads on too few cores) is no such case: the wall time is what the user ran,
// and its change stays judged on it. A change seen in wall time and not in CPU time stays in
// the change table with both figures, and the verdict names it (verdict.hpp). Pure.
#pragma once

#include "series.hpp"

#include <cstddef>

namespace ringscale::analysis::history {

/// Whether launches [lo, hi) of `s` are judged on CPU time: the compute phase is at least
/// half of the step (medians), a launch among them is marked contended by others' load (not
/// oversubscribed), and every one of them has its compute CPU time.
bool judged_on_cpu(const series& s, std::size_t lo, std::size_t hi);

/// The decision rule on the compute CPU time of the change at `at` of `s` (segments [lo, at)
/// and [at, hi)): the ratio of the sides' median CPU times with its CI from the CPU series'
/// own noise, the threshold min_effect; the marks not weighed (others' load does not lengthen
/// CPU time). `change`: the ratio less 1.
decision_result judge_cpu_change(const series& s, std::size_t lo, std::size_t at, std::size_t hi,
                                 const change_options& opt, double& change);

} // namespace ringscale::analysis::history
