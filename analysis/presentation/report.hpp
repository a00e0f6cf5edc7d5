// `report DIR`: report.md with the summary, scaling and model tables, and PNG plots drawn by
// gnuplot (scaling per family, busbw against message size, time breakdown, heatmaps).
#pragma once

#include "analysis/comparisons/accuracy.hpp"
#include "analysis/comparisons/compare.hpp"
#include "analysis/comparisons/crossover.hpp"
#include "analysis/comparisons/numerics.hpp"
#include "analysis/history/series.hpp"
#include "analysis/measures/summary.hpp"
#include "analysis/models/model_multi_study.hpp"
#include "analysis/predict/map.hpp"
#include "analysis/reading/reader.hpp"
#include "views.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

struct report_inputs {
    const result_set* results = nullptr;
    const std::vector<case_summary>* rows = nullptr;
    const std::vector<scaling_result>* scaling = nullptr;
    const std::vector<family_model>* models = nullptr;
    std::vector<std::string> model_refusals;     ///< families that could not be modelled, and why
    std::string settings;                        ///< one line: the options used
    const crossover_result* crossover = nullptr; ///< attention schemes by (S, P); may be null
    const std::vector<study_model>* study_models = nullptr; ///< t(p, S) models; may be null
    const std::vector<pooled_case>* pooled = nullptr;       ///< for the question plots; may be null
    std::vector<std::string> notes;                         ///< lines for the Inputs section
    const predict::crossover_map* predict_map = nullptr;    ///< at scale; may be null
    const accuracy_result* accuracy = nullptr;              ///< errors against fp64; may be null
    const numerics_result* numerics = nullptr;    ///< train_step --numerics verdicts; may be null
    const history::series_set* history = nullptr; ///< --history; may be null
    /// --baseline: the study's cases against a baseline set (compare's verdicts); may be null.
    const comparison* compared = nullptr;
    std::string baseline; ///< what the baseline was (its inputs)
};

struct report_options {
    std::string dir;
    std::size_t max_heatmaps = 6;
    std::string family_plots;      ///< families to plot alone (label substring, "all"; "": none)
    std::size_t history_plots = 6; ///< trend plots of the series that changed most recently
};

/// Write DIR/report.md, DIR/report.html (the same model) and DIR/*.png (creates
/// DIR). Plots are skipped, with a note in the
/// report, when gnuplot is not installed. Returns the PNG file names written.
std::vector<std::string> write_report(const report_inputs& in, const report_options& opt);

} // namespace ringscale::analysis
