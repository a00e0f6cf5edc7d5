#include "descriptive.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <limits>
#include <numeric>

namespace ringscale::analysis {

namespace {
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
    if (sorted.empty())
        return nan;
    const double h = (static_cast<double>(sorted.size()) - 1.0) * std::clamp(q, 0.0, 1.0);
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double quantile(std::vector<double> values, double q) {
    std::sort(values.begin(), values.end());
    return quantile_sorted(values, q);
}

double median(std::vector<double> values) {
    return quantile(std::move(values), 0.5);
}

double mean(const std::vector<double>& values) {
    if (values.empty())
        return nan;
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double stddev(const std::vector<double>& values) {
    if (values.size() < 2)
        return nan;
    const double m = mean(values);
    double ss = 0;
    for (double v : values)
        ss += (v - m) * (v - m);
    return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

double coefficient_of_variation(const std::vector<double>& values) {
    const double m = mean(values);
    return m == 0 ? nan : stddev(values) / m;
}

std::optional<rank_interval> median_ci_ranks(std::size_t n, double level) {
    if (n == 0)
        return std::nullopt;
    const boost::math::binomial_distribution<double> b(static_cast<double>(n), 0.5);
    const double tail = (1.0 - level) / 2.0;
    // P(B <= l - 1) grows with l: binary-search the largest l in [1, n/2] within the tail.
    std::size_t good = 0;
    std::size_t lo = 1;
    std::size_t hi = n / 2;
    while (lo <= hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (boost::math::cdf(b, static_cast<double>(mid - 1)) <= tail) {
            good = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (good == 0)
        return std::nullopt;
    const double coverage = 1.0 - 2.0 * boost::math::cdf(b, static_cast<double>(good - 1));
    return rank_interval{good, n + 1 - good, coverage};
}

estimate median_ci_sorted(const std::vector<double>& sorted, double level) {
    estimate e{quantile_sorted(sorted, 0.5), nan, nan};
    if (auto r = median_ci_ranks(sorted.size(), level)) {
        e.lo = sorted[r->lower - 1];
        e.hi = sorted[r->upper - 1];
    }
    return e;
}

tukey_fences tukey_fences_sorted(const std::vector<double>& sorted, double k) {
    const double q1 = quantile_sorted(sorted, 0.25);
    const double q3 = quantile_sorted(sorted, 0.75);
    const double iqr = q3 - q1;
    return {q1, q3, q1 - k * iqr, q3 + k * iqr};
}

std::size_t count_outside(const std::vector<double>& values, const tukey_fences& fences) {
    return static_cast<std::size_t>(std::count_if(values.begin(), values.end(), [&](double v) {
        return v < fences.lower || v > fences.upper;
    }));
}

std::vector<double> remove_outside(const std::vector<double>& values, const tukey_fences& fences) {
    std::vector<double> kept;
    kept.reserve(values.size());
    for (double v : values)
        if (v >= fences.lower && v <= fences.upper)
            kept.push_back(v);
    return kept;
}

} // namespace ringscale::analysis
