#include "small_sample.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/descriptive.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

namespace ringscale::analysis::history {

namespace {

constexpr std::size_t null_draws = 20000;

/// C(n, k) as a double (exact far beyond the sizes asked).
double choose(std::size_t n, std::size_t k) {
    double c = 1;
    for (std::size_t i = 1; i <= k; ++i)
        c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
    return c;
}

double normal(splitmix64& rng) {
    const auto uniform = [&] { return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53; };
    return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
}

/// The sorted null statistics of segments of n launches, drawn once (seeded by n and m).
const std::vector<double>& null_of(std::size_t n, std::size_t m) {
    static std::mutex lock;
    static std::map<std::pair<std::size_t, std::size_t>, std::vector<double>> cache;
    const std::lock_guard<std::mutex> held(lock);
    std::vector<double>& out = cache[{n, m}];
    if (!out.empty())
        return out;
    splitmix64 rng(0x5eed0000ULL + n * 131 + m);
    std::vector<double> y(n);
    out.reserve(null_draws);
    for (std::size_t k = 0; k < null_draws; ++k) {
        for (double& v : y)
            v = normal(rng);
        out.push_back(small_best(y, m).t);
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

double permutation_floor(std::size_t n, std::size_t tau) {
    return 2 / choose(n, std::min(tau, n - tau));
}

std::size_t permutation_reach(double alpha, std::size_t m) {
    std::size_t n = 2 * std::max<std::size_t>(1, m);
    while (permutation_floor(n, std::max<std::size_t>(1, m)) > alpha)
        ++n;
    return n;
}

std::size_t small_sample_limit(double alpha, std::size_t m) {
    return permutation_reach(alpha / 5, m);
}

std::size_t small_sample_reach(double alpha, std::size_t m) {
    return alpha * static_cast<double>(null_draws + 1) >= 1 ? 2 * std::max<std::size_t>(1, m) : 0;
}

std::size_t smallest_launches(double alpha, std::size_t m) {
    const std::size_t small = small_sample_reach(alpha, m);
    return small ? small : permutation_reach(alpha, m);
}

small_split small_best(const std::vector<double>& y, std::size_t m) {
    const std::size_t n = y.size();
    m = std::max<std::size_t>(1, m);
    small_split best;
    if (n < 2 * m)
        return best;
    // Each split's sides and steps from sorted copies kept up to date (O(n) a split, not a
    // sort: the null draws 20,000 segments of each size, up to some 70 launches at a small
    // alpha): left grows by y[tau - 1], right loses it, and the steps leave out the one
    // across the split.
    std::vector<double> left(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(m - 1));
    std::vector<double> right(y.begin() + static_cast<std::ptrdiff_t>(m - 1), y.end());
    std::sort(left.begin(), left.end());
    std::sort(right.begin(), right.end());
    std::vector<double> steps;
    for (std::size_t i = 1; i < n; ++i)
        steps.push_back(std::abs(y[i] - y[i - 1]));
    std::sort(steps.begin(), steps.end());
    const double h = std::max(0.0, static_cast<double>(steps.size()) - 2.0) * 0.75;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    for (std::size_t tau = m; tau + m <= n; ++tau) {
        const double v = y[tau - 1];
        left.insert(std::upper_bound(left.begin(), left.end(), v), v);
        right.erase(std::lower_bound(right.begin(), right.end(), v));
        // The upper quartile of the steps but the one across the split (quantile_sorted's
        // interpolation over the n - 2 left).
        const double across = std::abs(y[tau] - y[tau - 1]);
        const auto gone = static_cast<std::size_t>(
            std::lower_bound(steps.begin(), steps.end(), across) - steps.begin());
        const auto at = [&](std::size_t j) { return steps[j < gone ? j : j + 1]; };
        const std::size_t hi = std::min(lo + 1, steps.size() - 2);
        const double s = steps.size() < 2
                             ? std::numeric_limits<double>::quiet_NaN()
                             : at(lo) + (h - static_cast<double>(lo)) * (at(hi) - at(lo));
        const double d = std::abs(quantile_sorted(right, 0.5) - quantile_sorted(left, 0.5));
        const double a = static_cast<double>(tau), b = static_cast<double>(n - tau);
        const double t = s > 0   ? d / (s * std::sqrt(1 / a + 1 / b))
                         : d > 0 ? std::numeric_limits<double>::infinity()
                                 : 0;
        if (best.tau == 0 || t > best.t)
            best = {tau, t};
    }
    return best;
}

double small_p(double t, std::size_t n, std::size_t m) {
    const std::vector<double>& null = null_of(n, std::max<std::size_t>(1, m));
    const auto at_least =
        static_cast<std::size_t>(null.end() - std::lower_bound(null.begin(), null.end(), t));
    return static_cast<double>(at_least + 1) / static_cast<double>(null.size() + 1);
}

} // namespace ringscale::analysis::history
