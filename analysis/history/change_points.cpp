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

/// Sum of |v - w| over the values w already added, by a Fenwick tree over the values' ranks.
class abs_sum_tree {
  public:
    explicit abs_sum_tree(std::size_t n) : m_count(n + 1, 0), m_sum(n + 1, 0) {}
    /// Adds `v` (of rank `r` among all values) and returns sum |v - w| over earlier w.
    double add(std::size_t r, double v) {
        const auto [below_n, below_s] = prefix(r);
        const double above_n = m_total_n - below_n, above_s = m_total_s - below_s;
        const double d = below_n * v - below_s + above_s - above_n * v;
        for (std::size_t i = r + 1; i < m_count.size(); i += i & (~i + 1)) {
            m_count[i] += 1;
            m_sum[i] += v;
        }
        m_total_n += 1;
        m_total_s += v;
        return d;
    }

  private:
    std::pair<double, double> prefix(std::size_t r) const {
        double n = 0, s = 0;
        for (std::size_t i = r; i > 0; i -= i & (~i + 1)) {
            n += m_count[i];
            s += m_sum[i];
        }
        return {n, s};
    }
    std::vector<double> m_count, m_sum;
    double m_total_n = 0, m_total_s = 0;
};

/// Rank of each value (ties broken by position: equal values differ by 0 either way).
std::vector<std::size_t> ranks_of(const std::vector<double>& y) {
    std::vector<std::size_t> order(y.size()), rank(y.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return y[a] < y[b]; });
    for (std::size_t i = 0; i < order.size(); ++i)
        rank[order[i]] = i;
    return rank;
}

/// Q(tau) for every tau from the values and their ranks.
std::vector<double> statistics(const std::vector<double>& y, const std::vector<std::size_t>& rank) {
    const std::size_t n = y.size();
    std::vector<double> left(n + 1, 0), right(n + 1, 0);
    abs_sum_tree fwd(n), bwd(n);
    for (std::size_t i = 0; i < n; ++i)
        left[i + 1] = left[i] + fwd.add(rank[i], y[i]);
    for (std::size_t i = n; i-- > 0;)
        right[i] = right[i + 1] + bwd.add(rank[i], y[i]);
    std::vector<double> q(n > 0 ? n - 1 : 0, 0);
    const double total = left[n], dn = static_cast<double>(n);
    for (std::size_t tau = 1; tau < n; ++tau) {
        const double a = static_cast<double>(tau), b = dn - a;
        const double cross = total - left[tau] - right[tau];
        const double within_l = a > 1 ? 2 * left[tau] / (a * (a - 1)) : 0;
        const double within_r = b > 1 ? 2 * right[tau] / (b * (b - 1)) : 0;
        q[tau - 1] = a * b / dn * (2 * cross / (a * b) - within_l - within_r);
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
        const std::vector<double> y(logx.begin() + static_cast<std::ptrdiff_t>(a),
                                    logx.begin() + static_cast<std::ptrdiff_t>(b));
        const std::vector<std::size_t> rank = ranks_of(y);
        const auto [tau, q] = best_split(y, rank, m);
        if (!(q > 0))
            continue;
        const double p = permutation_p(y, rank, q, opt, rng);
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
