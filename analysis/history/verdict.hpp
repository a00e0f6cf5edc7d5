// What a history's change points mean (issue 49): each change judged by the one decision rule
// (analysis/statistics/decision.hpp) with the marks of the launches on each side, explained by
// what moved with it (the machine state: marks, cores, threads; the environment: CPU or GPU,
// MPI/NCCL/CUDA versions, node count, ringscale's commit), and the history's verdict with the
// exit code of `--fail-on regression` (DESIGN.md, "Exit codes"): 1 a regression, 6 not
// decided, 0 judged with no regression. Pure.
#pragma once

#include "series.hpp"

#include "analysis/statistics/decision.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis::history {

/// The rule's verdict on the change at `at` of `s` (segments [lo, at) and [at, hi)): the
/// launches on each side, the CI of the ratio of their medians (log-normal, from the
/// series' noise), the threshold min_effect, and the largest mark effect on each side.
decision_result judge_change(const series& s, std::size_t lo, std::size_t at, std::size_t hi,
                             const change_options& opt);

/// What moved with the change at `at` of `s`: the marks ("marks 0/8 -> 6/6 (why)"), the
/// cores and threads, and each environment value that differs between launch at-1 and at
/// ("nccl_version 2.21 -> 2.22 at the same launch"), "; "-joined; "" when nothing recorded did.
std::string moved_with(const series& s, std::size_t lo, std::size_t at, std::size_t hi);

/// Why a series of n launches with the stated detectable step cannot be judged ("" when it
/// can): fewer launches than any change test can reject at alpha with, or a detectable step
/// above opt.max_detectable (or none), "too few launches: N; needs M". Pure.
std::string too_few_launches(std::size_t n, double detectable, const change_options& opt);

/// Whether a series is judged, and why not.
std::string undecided_reason(const series& s, const change_options& opt);

/// The history's verdict: lines naming each regression and each series not decided, a
/// summary line, and the exit code of --fail-on regression.
struct verdict {
    std::vector<std::string> lines;
    std::string summary;
    int code = 0;
};

verdict judge(const series_set& set, const series_options& opt);

} // namespace ringscale::analysis::history
