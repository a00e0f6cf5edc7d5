// Nonparametric two-sample comparison: the Mann-Whitney U test (exact for small samples
// without ties, normal approximation with tie and continuity correction otherwise), the
// Cliff's delta effect size, and Holm's correction for testing many cases at once.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// Outcome of a two-sided Mann-Whitney U test of `x` against `y`.
struct mann_whitney_result {
    double u_x = 0;          ///< U statistic of x: pairs (xi, yj) with xi > yj, ties count 1/2
    double z = 0;            ///< standardised U (0 for the exact test)
    double p_value = 1;      ///< two-sided
    bool exact = false;      ///< exact null distribution used
    double cliffs_delta = 0; ///< P(x > y) - P(x < y), in [-1, 1]
};

/// Mann-Whitney U test; exact when both samples have at most `exact_max` values and there
/// are no ties, else the normal approximation with tie correction and continuity
/// correction. p = 1 when either sample is empty.
mann_whitney_result mann_whitney(const std::vector<double>& x, const std::vector<double>& y,
                                 std::size_t exact_max = 25);

/// Two-sided exact p-value of U = u for samples of size m and n without ties.
double mann_whitney_exact_p(double u, std::size_t m, std::size_t n);

/// Midranks (1-based, ties get the mean of their ranks) of `values`, in input order;
/// `tie_term` receives sum over tie groups of (t^3 - t).
std::vector<double> midranks(const std::vector<double>& values, double* tie_term = nullptr);

/// Romano et al. (2006) magnitude label of |delta|: negligible, small, medium or large.
std::string cliffs_delta_label(double delta);

/// Holm-Bonferroni adjusted p-values (same order as input), monotone and capped at 1.
std::vector<double> holm_adjust(const std::vector<double>& p_values);

} // namespace ringscale::analysis
