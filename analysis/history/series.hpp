// Series of one case on one environment across launches (issue 37), ordered by launch time or
// by a label, with their change points and what moved at each: the step's median before and
// after with CIs, the change, its p, and which phase (compute, communication, waiting for the
// slowest rank, memory) carried it. Environments are never pooled. Launches measured on a
// machine marked disturbed (contended, drifted) stay in their series, counted apart, and
// their marks enter each change's verdict through the decision rule (issue 49; skip_marked
// leaves them out, the behaviour before).
#pragma once

#include "change_points.hpp"
#include "index.hpp"

#include "analysis/statistics/decision.hpp"
#include "analysis/statistics/descriptive.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ringscale::analysis::history {

struct series_options {
    std::string order_label;          ///< "" = by launch time; else the label KEY to order by
    std::vector<std::string> commits; ///< --commits: the order of the label's values
    /// What makes the environment (besides nodes x ranks per node, in the case key): /meta
    /// attributes, or label:KEY for a user's label.
    std::vector<std::string> env_keys = {"device_name", "mpi_library", "mpi_library_version",
                                         "nccl_version"};
    change_options change;
    std::int64_t now_s = 0;   ///< launches dated more than a day after this are left out
    bool skip_marked = false; ///< --skip-marked: marked launches are left out of their series
};

/// One launch of a series.
struct series_point {
    const launch_record* launch = nullptr;
    const launch_case* c = nullptr;
};

/// How one phase moved across a change (medians of the segments' launch medians).
struct phase_shift {
    std::string phase; ///< compute | communication | wait | memory
    double before = 0;
    double after = 0;
    double change() const { return after / before - 1; }
};

struct found_change {
    std::size_t index = 0; ///< into the series' points: the first launch of the new level
    double p = 1;
    estimate before{}, after{}; ///< step medians of the launch medians, with 95% CIs
    std::vector<phase_shift> phases;
    std::string moved;       ///< the phase that carried the change, or why none is named
    std::string with;        ///< what moved with it: marks, cores, threads, environment ("" none)
    decision_result verdict; ///< the decision rule's, with the marks of each side
    /// Judged on the compute phase's CPU time, wall time contended (cpu_time.hpp): the CPU
    /// time's change (NaN: judged on wall time, as every other change).
    double cpu_change = std::numeric_limits<double>::quiet_NaN();
    double change() const { return after.value / before.value - 1; }
    /// The verdict and, where judged on CPU time, how: "tie (judged on CPU time: wall time
    /// contended; CPU time +0.3%)".
    std::string verdict_line() const;
};

struct series {
    std::string key;                  ///< case key + environment
    std::string label;                ///< "job/variant a=1 P=4 nodes=1x4"
    std::string env;                  ///< the environment's values, " | "-joined
    std::vector<series_point> points; ///< in order; marked launches too (unless skip_marked)
    std::size_t marked = 0;           ///< marked launches among the points
    std::size_t skipped = 0;          ///< marked launches left out (series_options::skip_marked)
    std::string first_mark;           ///< why the first marked launch was marked
    std::vector<found_change> changes;
    double noise = 0;      ///< launch noise (log sd, about the CV)
    double detectable = 0; ///< smallest step the method finds with 90% power (fraction)

    /// True when the newest launch lies after a slowdown the decision rule calls slower.
    bool regressed() const {
        return !changes.empty() && changes.back().verdict.verdict == decision::slower;
    }
};

/// One stretch of a series between its change points: launches [begin, end) and the median
/// of their step medians with its 95% CI. Marked launches are in it, as they are in each
/// change's before and after (issue 49: they stay in their series; only the decision rule
/// weighs their marks).
struct series_segment {
    std::size_t begin = 0, end = 0;
    estimate median{};
};

/// The segments of `s`, cut at its change points, in order: every point in one (none when
/// `s` has no points). What report.md's trend plots, history_series.csv and the page draw.
std::vector<series_segment> segments_of(const series& s);

struct series_set {
    std::vector<series> all;
    std::vector<std::string> notes;     ///< one line each: launches left out and why
    std::vector<std::string> unmatched; ///< a filter that matched nothing (--order label:KEY)
    /// The series judged together (2 x min_segment launches or more), over which the run's
    /// alpha is split (change_options::family).
    std::size_t family = 1;
};

/// Every series of `contents`, analysed, each tested at opt.change.alpha over the series
/// judged (series_set::family). Refers into `contents`, which must outlive it.
series_set build_series(const index_contents& contents, const series_options& opt);

/// The labels of a launch as "k=v k=v" (for tables).
std::string labels_text(const launch_record& l);

} // namespace ringscale::analysis::history
