// The report's plots, one per question a study asks: which attention scheme is fastest as P
// grows (time against P, one panel per S) and where schemes trade places along S (one panel
// per P, crossings marked with their schemes and CI); what each scheme needs in memory per
// rank against P; DDP, ZeRO-1 and FSDP against P (time and tokens/s; memory by category); and
// the collectives' bus bandwidth against message size (one panel per operation). Every case
// of those jobs appears in one of them; each plot is drawn by draw_panels (plot_panels.hpp).
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/comparisons/crossover.hpp"
#include "analysis/measures/summary.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// What the question plots read: the pooled cases, their summaries and the crossings.
struct question_inputs {
    const std::vector<pooled_case>* pooled = nullptr;
    const std::vector<case_summary>* rows = nullptr;
    const crossover_result* crossover = nullptr; ///< may be null
};

/// Draw every question plot into `dir`; returns the Markdown (a heading per question, one
/// line on what each plot shows and its image) and appends the PNG names to `pngs`.
std::string question_plots(const question_inputs& in, const std::string& dir,
                           std::vector<std::string>& pngs);

/// The collectives' section: busbw against message size, one panel per operation, one line
/// per P; withheld figures (no-op, impossible) are not drawn. "" when there are none.
std::string busbw_plots(const std::vector<case_summary>& rows, const std::string& dir,
                        std::vector<std::string>& pngs);

} // namespace ringscale::analysis
