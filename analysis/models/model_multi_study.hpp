// Two-parameter models of a study: attention cases that differ only in P and the sequence
// length S (strong cases' seq_len, weak cases' derived seq_len) are one group, modelled as
// t(p, S) (model_multi.hpp) when it has 3+ distinct P and S; tables for `ringscale-stats model`.
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/presentation/table.hpp"
#include "model_multi.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

struct study_model {
    std::string label; ///< job/variant and the shared parameters
    std::vector<point2> pts;
    std::vector<double> t; ///< median step time of each point
    multi_model fit;
    std::vector<multi_prediction> predictions;
};

/// Fit t(p, S) for every group with 3+ distinct P and S (6+ points); predict at `at` with
/// `replicates` bootstrap refits (none when `at` is empty).
std::vector<study_model> fit_study_models(const std::vector<pooled_case>& pooled,
                                          const std::vector<point2>& at, std::size_t replicates,
                                          std::uint64_t seed, double level);

/// One row per group: its formula and fit errors.
table study_model_table(const std::vector<study_model>& models);
/// One row per group and predicted (P, S).
table study_prediction_table(const std::vector<study_model>& models);

} // namespace ringscale::analysis
