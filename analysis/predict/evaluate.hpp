// Predictions with bands. A band combines the calibration's uncertainty (the prediction
// under every bootstrap calibration) with the model's own error, measured on CALIB: the
// relative error of predicting each calibration case's step time, cross-validated by leaving
// out every P in turn when CALIB has two or more (an honest extrapolation in P), else in
// sample. Each replicate's prediction is multiplied by one such error drawn at random; the
// band is the percentile interval at the requested level.
#pragma once

#include "calibrate.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::analysis::predict {

/// Relative model errors log(measured / predicted) of the calibration cases.
struct model_error {
    std::vector<double> log_ratio;
    std::string basis; ///< "leave-one-P-out, 12 cases" or "in sample, 4 cases"
};

/// Model errors of the calibration cases under `point` (in sample) or, with two or more P
/// among the compute observations, refitted without each P in turn.
model_error calibration_error(const calibration_set& set, const calibration& point,
                              const std::vector<double>& cy, const std::vector<double>& ly);

/// Where the figures come from: a calibration (with bootstrap replicates) or a profile.
struct figure_source {
    const calibration* point = nullptr;
    const std::vector<calibration>* replicates = nullptr;
    const hardware_profile* hardware = nullptr; ///< when set, every figure comes from it
    figures for_target(const target& t, const calibration* cal) const;
};

struct predicted {
    target t;
    step_prediction point;
    double lo = unknown, hi = unknown; ///< band at the requested level
};

/// Predict every target with its band.
std::vector<predicted> predict_all(const std::vector<target>& targets, const figure_source& src,
                                   const model_error& err, double level, std::uint64_t seed);

/// Median step time of a measured target (pooled launches).
double measured_median(const target& t);

} // namespace ringscale::analysis::predict
