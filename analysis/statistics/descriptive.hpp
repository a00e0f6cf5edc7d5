// Descriptive statistics as pure functions: percentiles, median with its rank-based
// confidence interval, moments and Tukey fences. Nonparametric by default, following
// Hoefler & Belli (SC15) and Le Boudec, "Performance Evaluation of Computer and
// Communication Systems" (2010), chapter 2.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace ringscale::analysis {

/// Percentile `q` in [0, 1] of an ascending-sorted sample, linear interpolation between
/// order statistics (Hyndman & Fan type 7, numpy's and pandas' default). NaN when empty.
double quantile_sorted(const std::vector<double>& sorted, double q);

/// Percentile `q` of an unsorted sample (copies and sorts). NaN when empty.
double quantile(std::vector<double> values, double q);

/// Median (type 7, i.e. the mean of the two middle values for even n). NaN when empty.
double median(std::vector<double> values);

/// Arithmetic mean; NaN when empty.
double mean(const std::vector<double>& values);

/// Sample standard deviation (n - 1 denominator); NaN when fewer than two values.
double stddev(const std::vector<double>& values);

/// Coefficient of variation: sample standard deviation / mean; NaN when undefined.
double coefficient_of_variation(const std::vector<double>& values);

/// 1-based order-statistic ranks [lower, upper] bounding a distribution-free confidence
/// interval for the median of n samples.
struct rank_interval {
    std::size_t lower = 0;
    std::size_t upper = 0;
    double coverage = 0; ///< exact coverage probability, >= the requested level
};

/// Ranks of the median's CI from the Binomial(n, 1/2) distribution: the largest `lower`
/// with P(B <= lower - 1) <= (1 - level) / 2, and upper = n + 1 - lower. No interval exists
/// for small n (n < 6 at the 95% level): returns nullopt.
std::optional<rank_interval> median_ci_ranks(std::size_t n, double level = 0.95);

/// A value with its confidence interval; lo/hi are NaN when no interval exists.
struct estimate {
    double value;
    double lo;
    double hi;
};

/// Median of an ascending-sorted sample and its distribution-free CI at `level`.
estimate median_ci_sorted(const std::vector<double>& sorted, double level = 0.95);

/// Tukey fences: values below q1 - k·IQR or above q3 + k·IQR are outliers (k = 1.5).
struct tukey_fences {
    double q1;
    double q3;
    double lower;
    double upper;
};

/// Fences of an ascending-sorted sample (quartiles by type 7).
tukey_fences tukey_fences_sorted(const std::vector<double>& sorted, double k = 1.5);

/// Number of values strictly outside the fences.
std::size_t count_outside(const std::vector<double>& values, const tukey_fences& fences);

/// The values inside the fences (order kept).
std::vector<double> remove_outside(const std::vector<double>& values, const tukey_fences& fences);

} // namespace ringscale::analysis
