#include "change_points.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/descriptive.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace ringscale::analysis::history {

namespace {

/// Rank of each value (ties broken by position: equal values differ by 0 either way).
std::vector<std::size_t> ranks_of(const std::vector<double>& y) {
    std::vector<std::size_t> order(y.size()), rank(y.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return y[a] < y[b]; });
    for (std::size_t i = 0; i < order.size(); ++i)
        rank[order[i]] = i;
    return rank;
}

/// Q(tau) for every tau: the energy statistic with exponent 2, tau (n - tau) / n x
/// (2 E|X - Y|^2 - E|X - X'|^2 - E|Y - Y'|^2) = tau (n - tau) / n x 2 (mean_l - mean_r)^2,
/// by prefix sums. (`rank` is kept for the permutations' bookkeeping.)
std::vector<double> statistics(const std::vector<double>& y, const std::vector<std::size_t>&) {
    const std::size_t n = y.size();
    std::vector<double> q(n > 0 ? n - 1 : 0, 0);
    const double total = std::accumulate(y.begin(), y.end(), 0.0), dn = static_cast<double>(n);
    double left = 0;
    for (std::size_t tau = 1; tau < n; ++tau) {
        left += y[tau - 1];
        const double a = static_cast<double>(tau), b = dn - a;
        const double d = left / a - (total - left) / b;
        q[tau - 1] = a * b / dn * 2 * d * d;
    }
    return q;
}

/// The best split of `y` (tau, Q) among those leaving min_segment on each side.
std::pair<std::size_t, double> best_split(const std::vector<double>& y,
                                          const std::vector<std::size_t>& rank, std::size_t m) {
    const std::vector<double> q = statistics(y, rank);
    std::pair<std::size_t, double> best{0, -std::numeric_limits<double>::infinity()};
    for (std::size_t tau = m; tau + m <= y.size(); ++tau)
        if (q[tau - 1] > best.second)
            best = {tau, q[tau - 1]};
    return best;
}

/// Permutation p of the largest Q of `y`, stopping once it cannot reach alpha.
double permutation_p(std::vector<double> y, std::vector<std::size_t> rank, double observed,
                     const change_options& opt, splitmix64& rng) {
    const auto limit =
        static_cast<std::size_t>(opt.alpha * static_cast<double>(opt.permutations + 1));
    std::size_t exceed = 0, done = 0;
    for (; done < opt.permutations; ++done) {
        for (std::size_t i = y.size(); i > 1; --i) {
            const std::size_t j = rng.index(i);
            std::swap(y[i - 1], y[j]);
            std::swap(rank[i - 1], rank[j]);
        }
        exceed += best_split(y, rank, opt.min_segment).second >= observed;
        if (exceed > limit) { // p > alpha already: no need to go on
            ++done;
            break;
        }
    }
    return static_cast<double>(exceed + 1) / static_cast<double>(done + 1);
}

double median_of(const std::vector<double>& x, std::size_t a, std::size_t b) {
    return median(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(a),
                                      x.begin() + static_cast<std::ptrdiff_t>(b)));
}

/// logx[a, b) as robust z-scores clamped to +-2: (y - median) / the launch noise from
/// successive differences. An outlier launch then weighs no more than a 2-sigma one, so it can
/// neither pull a split towards itself nor widen the permutations' null distribution (on the
/// raw values one x2 launch did both), while a clean step keeps its size, which ranks lose.
std::vector<double> winsorized(const std::vector<double>& logx, std::size_t a, std::size_t b) {
    std::vector<double> y(logx.begin() + static_cast<std::ptrdiff_t>(a),
                          logx.begin() + static_cast<std::ptrdiff_t>(b));
    std::vector<double> d;
    for (std::size_t i = 1; i < y.size(); ++i)
        d.push_back(std::abs(y[i] - y[i - 1]));
    const double sigma = d.empty() ? 0 : 1.4826 * median(d) / std::sqrt(2.0);
    const double center = median(y);
    for (double& v : y)
        v = sigma > 0 ? std::clamp((v - center) / sigma, -2.0, 2.0) : v - center;
    return y;
}

/// Sum of |log x - median| over x[a, b).
double l1_cost(const std::vector<double>& logx, std::size_t a, std::size_t b) {
    std::vector<double> v(logx.begin() + static_cast<std::ptrdiff_t>(a),
                          logx.begin() + static_cast<std::ptrdiff_t>(b));
    const double m = median(v);
    double cost = 0;
    for (const double y : v)
        cost += std::abs(y - m);
    return cost;
}

/// Where near `tau` the segment [a, b) splits best in least absolute deviations of the log
/// values from each side's median: the energy statistic's weight favours the middle of a
/// segment, which moved a step near an end by a launch or two.
std::size_t refine(const std::vector<double>& logx, std::size_t a, std::size_t b, std::size_t tau,
                   std::size_t m) {
    std::size_t best = tau;
    double best_cost = std::numeric_limits<double>::infinity();
    const std::size_t lo = std::max(a + m, a + tau > 5 + a ? a + tau - 5 : a);
    const std::size_t hi = std::min(b - m, a + tau + 5);
    for (std::size_t t = lo; t <= hi; ++t) {
        const double cost = l1_cost(logx, a, t) + l1_cost(logx, t, b);
        if (cost < best_cost) {
            best_cost = cost;
            best = t - a;
        }
    }
    return best;
}

} // namespace

std::vector<double> energy_statistics(const std::vector<double>& y) {
    return statistics(y, ranks_of(y));
}

std::vector<change_point> find_change_points(const std::vector<double>& x,
                                             const change_options& opt) {
    std::vector<double> logx(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        logx[i] = std::log(x[i]);
    const std::size_t m = std::max<std::size_t>(1, opt.min_segment);
    splitmix64 rng(opt.seed);
    std::vector<change_point> found;
    std::vector<std::pair<std::size_t, std::size_t>> todo{{0, x.size()}};
    while (!todo.empty()) {
        const auto [a, b] = todo.back();
        todo.pop_back();
        if (b - a < 2 * m)
            continue;
        const std::vector<double> y = winsorized(logx, a, b);
        const std::vector<std::size_t> rank = ranks_of(y);
        const auto [split, q] = best_split(y, rank, m);
        if (!(q > 0))
            continue;
        const double p = permutation_p(y, rank, q, opt, rng);
        const std::size_t tau = p <= opt.alpha ? refine(logx, a, b, split, m) : split;
        const double effect = median_of(x, a + tau, b) / median_of(x, a, a + tau) - 1;
        if (p > opt.alpha || !(std::abs(effect) >= opt.min_effect))
            continue;
        found.push_back({a + tau, p});
        todo.emplace_back(a + tau, b);
        todo.emplace_back(a, a + tau);
    }
    std::sort(found.begin(), found.end(),
              [](const change_point& l, const change_point& r) { return l.index < r.index; });
    return found;
}

double launch_noise(const std::vector<double>& x) {
    if (x.size() < 3)
        return std::numeric_limits<double>::quiet_NaN();
    std::vector<double> d;
    for (std::size_t i = 1; i < x.size(); ++i)
        d.push_back(std::abs(std::log(x[i]) - std::log(x[i - 1])));
    return 1.4826 * median(d) / std::sqrt(2.0);
}

double min_detectable_step(std::size_t n, double sigma, const change_options& opt) {
    const std::size_t m = std::max<std::size_t>(1, opt.min_segment);
    if (n < 2 * m || !std::isfinite(sigma))
        return std::numeric_limits<double>::quiet_NaN();
    const double splits = static_cast<double>(n - 2 * m + 1);
    const boost::math::normal z;
    const double za = boost::math::quantile(boost::math::complement(z, opt.alpha / splits / 2));
    const double zb = boost::math::quantile(z, 0.9);
    const double half = static_cast<double>(n) / 2;
    const double log_step = (za + zb) * sigma * std::sqrt(2 / half);
    return std::max(std::expm1(log_step), opt.min_effect);
}

} // namespace ringscale::analysis::history
