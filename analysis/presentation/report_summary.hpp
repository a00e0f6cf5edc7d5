// The report's opening summary, in both report.md and report.html: the answers in plain words
// with only the fields that vary (the fields every line shares are said once above the lines):
// per (S, P) the first scheme against the runner-up with the decision rule's verdict ("fastest"
// only where the rule confirmed it), scaling efficiency at the largest P, the regressed series
// one line per cause (launch time, phase, what moved with it), and what was marked as one line
// with its counts. Each list is capped; the sections below hold the rest.
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/comparisons/crossover.hpp"
#include "analysis/comparisons/scaling.hpp"
#include "analysis/history/series.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

struct summary_inputs {
    const crossover_result* crossover = nullptr;          ///< may be null
    const std::vector<scaling_result>* scaling = nullptr; ///< may be null
    const history::series_set* history = nullptr;         ///< may be null
    const std::vector<pooled_case>* pooled = nullptr;     ///< may be null
};

/// "## At a glance" and its lists, as Markdown (every results-file string escaped).
std::string summary_section(const summary_inputs& in, std::size_t max_lines = 12);

} // namespace ringscale::analysis
