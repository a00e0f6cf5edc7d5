// Two-parameter performance models t(p, S) in Extra-P's multi-parameter normal form
// (Calotoiu et al., "Fast multi-parameter performance modeling", CLUSTER 2016):
//   t(p, S) = c0 + sum_k c_k * p^(i_k) * log2(p)^(j_k) * S^(m_k) * log2(S)^(l_k)
// with at most two terms whose exponents come from small fixed sets. Every hypothesis is
// fitted by least squares (Eigen) and the plausible one with the smallest leave-one-out
// cross-validated SMAPE is chosen (ties: fewer terms, then the earlier hypothesis), as the
// single-parameter model (model.hpp) does: plausible means positive over p in [1, 2^24] and
// S from half the smallest to 4096x the largest measured, never falling faster than the work
// per rank in p (d ln t / d ln p >= -1) and never falling as S grows. A prediction further
// beyond the data than the data spans in log p or log S is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// One parameter's factor x^exponent * log2(x)^log_power (1 when both are 0).
struct factor {
    double exponent = 0;
    int log_power = 0;
    std::string exponent_text; ///< "1/2", "-1", ... as printed
    bool is_one() const { return exponent == 0 && log_power == 0; }
};

/// One product term of the normal form: a factor of p times a factor of S.
struct multi_term {
    factor p, s;
    double eval(double pv, double sv) const;
    std::string text() const; ///< "S^2 * p^(-1)", "S * log2(p)"
};

/// Every product of a p factor (exponents {-1, -1/2, 0, 1/2, 1, 2}) and an S factor (exponents
/// {0, 1/2, 1, 3/2, 2, 3}), each x log powers {0, 1}, except the constant 1.
std::vector<multi_term> multi_term_set();

/// One measured point of a two-parameter study.
struct point2 {
    double p = 1;
    double s = 1;
};

struct multi_model {
    std::vector<multi_term> terms; ///< empty: the constant model
    std::vector<double> coef;      ///< c0, then one per term
    double smape = 0;              ///< of the fit, %
    double cv_smape = 0;           ///< leave-one-out cross-validated, %
    double r2 = 0;

    double eval(double p, double s) const;
    /// "1.0000e-03 + 2.0000e-09 * S^2 * p^(-1) + ..."
    std::string formula() const;
};

/// Least-squares fit of `terms` (plus a constant) to (pts, t); fills coef, smape and r2.
multi_model fit_multi(const std::vector<multi_term>& terms, const std::vector<point2>& pts,
                      const std::vector<double>& t);

/// True when `m` is plausible (see above) for data spanning `pts`.
bool plausible(const multi_model& m, const std::vector<point2>& pts);

/// Fit every hypothesis of up to `max_terms` terms and choose the plausible one with the
/// smallest LOO SMAPE (the constant model is the fallback). config_error when fewer than 3
/// distinct p or 3 distinct S, or fewer than 6 points, are given.
multi_model select_multi_model(const std::vector<point2>& pts, const std::vector<double>& t,
                               int max_terms = 2);

/// A prediction at (p, S) with a percentile band from refitting the chosen terms on
/// bootstrap resamples of each point's raw iteration times.
struct multi_prediction {
    double p = 0, s = 0, value = 0, lo = 0, hi = 0;
    std::string refusal; ///< non-empty: beyond what the data supports, no number
};
std::vector<multi_prediction> predict_multi(const std::vector<point2>& pts,
                                            const std::vector<std::vector<double>>& samples,
                                            const multi_model& chosen,
                                            const std::vector<point2>& at, std::size_t replicates,
                                            std::uint64_t seed, double level = 0.95);

} // namespace ringscale::analysis
