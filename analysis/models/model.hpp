// Empirical performance models in Extra-P's performance-model normal form (Calotoiu et al.,
// SC13) restricted to one parameter p and one term: t(p) = c0 + c1 · p^e · log2(p)^k, with
// e and k from a fixed hypothesis set. Each hypothesis is fitted by least squares (Eigen);
// the one with the smallest leave-one-out cross-validated SMAPE among the physically
// plausible ones is chosen: positive for every p from 1 to 2^24, and never falling faster
// than the work per rank (d ln t / d ln p >= -1 in strong scaling, >= 0 in weak scaling).
// A prediction further beyond the data than the data spans (in log p) is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// One candidate term p^exponent · log2(p)^log_power (constant-only when `constant`).
struct hypothesis {
    double exponent = 0;
    int log_power = 0;
    bool constant = false;
    std::string exponent_text; ///< "1/2", "-1", ... as printed in the formula
};

/// Extra-P's exponent set {0, 1/4, 1/3, ..., 3} x log powers {0, 1, 2}, plus the constant
/// model and negative exponents {-1, -3/4, -2/3, -1/2, -1/3, -1/4} (log power 0 or 1) so
/// strong-scaling times that fall with p can be expressed.
std::vector<hypothesis> hypothesis_set();

struct model_fit {
    hypothesis h;
    double c0 = 0;
    double c1 = 0;
    double smape = 0;    ///< symmetric mean absolute percentage error of the fit, %
    double cv_smape = 0; ///< leave-one-out cross-validated SMAPE, %
    double r2 = 0;       ///< coefficient of determination of the fit

    double eval(double p) const;
    /// "2.000e+00 + 5.000e-01 * p * log2(p)"
    std::string formula() const;
};

/// Symmetric mean absolute percentage error of `predicted` against `actual`, %. Pure.
double smape(const std::vector<double>& actual, const std::vector<double>& predicted);

/// Least-squares fit of one hypothesis to points (p, t); fills c0, c1, smape and r2.
model_fit fit_hypothesis(const hypothesis& h, const std::vector<double>& p,
                         const std::vector<double>& t);

/// Leave-one-out cross-validated SMAPE (%) of a hypothesis.
double loo_smape(const hypothesis& h, const std::vector<double>& p, const std::vector<double>& t);

/// Smallest elasticity d ln t / d ln p a model may have: -1 when work per rank falls as 1/p
/// (strong scaling), 0 when it does not fall (weak scaling).
inline constexpr double strong_elasticity = -1;
inline constexpr double weak_elasticity = 0;

/// True when `f` is positive and finite for p in [1, 2^24] and its elasticity (on a grid of
/// 97 points evenly spaced in log p) is at least `min_elasticity` (tolerance 1e-6).
bool plausible(const model_fit& f, double min_elasticity);

/// Fit every hypothesis and choose the plausible one with the smallest LOO SMAPE (ties: the
/// earlier, simpler hypothesis; the constant model is the fallback). Throws config_error
/// when fewer than 3 distinct p are given.
model_fit select_model(const std::vector<double>& p, const std::vector<double>& t,
                       double min_elasticity = strong_elasticity);

/// "" when a prediction at `at` is supported by data at `p`: at most as far beyond the
/// largest measured p (in log p) as the data spans, and not below 1; else the reason.
std::string extrapolation_refusal(const std::vector<double>& p, double at);

/// Prediction with a percentile band from refitting (model selection included) on
/// bootstrap resamples of each p's raw iteration times.
struct prediction {
    double p;
    double value; ///< NaN when refused
    double lo;
    double hi;
    std::string refusal; ///< non-empty: no number, and why
};
std::vector<prediction> predict_with_band(const std::vector<double>& p,
                                          const std::vector<std::vector<double>>& samples,
                                          const model_fit& chosen, const std::vector<double>& at,
                                          std::size_t replicates, std::uint64_t seed,
                                          double level = 0.95,
                                          double min_elasticity = strong_elasticity);

} // namespace ringscale::analysis
