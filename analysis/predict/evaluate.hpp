// Predictions with bands. A band combines the calibration's uncertainty (the prediction
// under every bootstrap calibration) with the model's own error, measured on CALIB: the
// relative error of predicting each calibration case's step time, cross-validated by leaving
// out every P in turn when CALIB has two or more (an honest extrapolation in P), else in
// sample. A fold whose P alone ran some thread count per rank keeps CALIB's speed-up per
// extra thread, which it cannot identify: its error is then that of carrying the rates in P.
// The leave-one-P-out errors also show the model's systematic bias when it extrapolates: predicting
// the largest P of CALIB from the smaller ones (upwards) and the smallest from the larger
// (downwards). A bias is corrected, for targets beyond CALIB's P in that direction, where it is
// consistent (3 or more cases, at least 80% of them on one side, median beyond 5%); it is reported
// either way. Each replicate's prediction is multiplied by one error drawn at random, taken about
// the median of its direction's errors where a bias was corrected (so the band is centred on the
// corrected prediction); the band is the percentile interval at the requested level, and its
// coverage of the leave-one-P-out cases is reported beside it.
#pragma once

#include "calibrate.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ringscale::analysis::predict {

/// A systematic error of the model in one direction of P, from leave-one-P-out.
struct model_bias {
    double log_ratio = 0; ///< median log(measured / predicted) of those cases (0: none seen)
    std::size_t cases = 0;
    std::size_t same_side = 0; ///< cases on the median's side of 0
    bool corrected = false;    ///< consistent: applied to targets beyond CALIB's P that way
    std::string text;          ///< "predicting P=2 from smaller P: 18% low (11 of 12 cases)"
};

/// Relative model errors log(measured / predicted) of the calibration cases.
struct model_error {
    std::vector<double> log_ratio;
    std::vector<int> at_p;    ///< the P of each error's case
    std::string basis;        ///< "leave-one-P-out, 12 cases" or "in sample, 4 cases"
    int min_p = 0, max_p = 0; ///< CALIB's P range (compute cases)
    model_bias above;         ///< predicting max_p from smaller P (targets above max_p)
    model_bias below;         ///< predicting min_p from larger P (targets below min_p)
    /// The fewest cores a CPU rank of CALIB could use (compute cases; inf: none). A target
    /// whose ranks share cores below that (and below one) is in a regime CALIB never ran.
    double min_share = std::numeric_limits<double>::infinity();
    /// The bias correction for a target at P (a log ratio; 0 within CALIB's P or where the
    /// bias is not consistent).
    double correction(int p) const;
};

/// A direction's bias from its errors (log ratios). Pure.
model_bias bias_of(const std::vector<double>& log_ratio, const std::string& what);

/// Coverage of the leave-one-P-out errors by the band the errors themselves give at `level`
/// (after the bias correction of their own direction): what the bands of held-out P promise.
double error_coverage(const model_error& err, double level);

/// Model errors of the calibration cases under `point` (in sample) or, with two or more P
/// among the compute observations, refitted without each P in turn.
model_error calibration_error(const calibration_set& set, const calibration& point,
                              const std::vector<double>& cy, const std::vector<double>& ly);

/// Where the figures come from: a calibration (with bootstrap replicates) or a profile.
struct figure_source {
    const calibration* point = nullptr;
    const std::vector<calibration>* replicates = nullptr;
    const hardware_profile* hardware = nullptr; ///< when set, every figure comes from it
    /// The marks kept in CALIB, priced into every band: the spread of CALIB's
    /// launches' estimated effects on their whole time, sqrt(p90 / p10) (1: no marks).
    /// A band [lo, hi] becomes [lo / f, hi * f]: the figures may carry that much of the
    /// machine's state either way.
    double mark_factor = 1;
    /// --skip-marked: the marked cases it left out entirely ("" when none): the true reason
    /// where a figure is then "not calibrated".
    std::string left_out;
    figures for_target(const target& t, const calibration* cal) const;
};

/// The scale of that second draw. A whole draw over-covered: over eight stored runs of
/// tests/bench/predict_load.sh (four studies, quiet and loaded) its bands covered 89-100% of
/// the held-out cases (mean 96%, four runs at 100%); half a draw (a quarter of the variance
/// again) gave 81-100% (mean 90.5%), 6 of the 8 runs within 80-97% (analysis/predict/README.md).
inline constexpr double unseen_sharing_scale = 0.5;

struct predicted {
    target t;
    step_prediction point;             ///< with the bias correction applied (bias_correction)
    double bias_correction = 0;        ///< log ratio applied: the model_error's for this P
    double lo = unknown, hi = unknown; ///< band at the requested level
    /// Its CPU ranks share cores more than any of CALIB's (model_error::min_share): the band
    /// takes a second, independent draw of the model's error, scaled by unseen_sharing_scale (an
    /// extrapolation LOPO can't see).
    bool unseen_sharing = false;
    /// Why the band could not be calibrated (lo, hi NaN then), "" when it was: a collectives
    /// case's link figures have no held-out error to draw a band from (their
    /// bootstrap alone gave 1.02x "90%" bands that held 0 of 35 held-out cases).
    std::string band_note;
    /// Held-out: why every launch of the measured case is marked ("" when some is not):
    /// shown, and left out of the validation's figures.
    std::string mark;
};

/// Predict every target with its band.
std::vector<predicted> predict_all(const std::vector<target>& targets, const figure_source& src,
                                   const model_error& err, double level, std::uint64_t seed);

/// Median step time of a measured target (pooled launches).
double measured_median(const target& t);

} // namespace ringscale::analysis::predict
