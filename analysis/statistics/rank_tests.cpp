#include "rank_tests.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numeric>

namespace ringscale::analysis {

std::vector<double> midranks(const std::vector<double>& values, double* tie_term) {
    const std::size_t n = values.size();
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    std::vector<double> ranks(n);
    double ties = 0;
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i;
        while (j + 1 < n && values[order[j + 1]] == values[order[i]])
            ++j;
        const double rank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2.0;
        for (std::size_t k = i; k <= j; ++k)
            ranks[order[k]] = rank;
        const double t = static_cast<double>(j - i + 1);
        ties += t * t * t - t;
        i = j + 1;
    }
    if (tie_term)
        *tie_term = ties;
    return ranks;
}

double mann_whitney_exact_p(double u, std::size_t m, std::size_t n) {
    // counts[k][u]: arrangements of k x-values among the y-values with U = u, built one
    // y-value at a time (the classic recurrence f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u)).
    const std::size_t umax = m * n;
    std::vector<std::vector<double>> f(m + 1, std::vector<double>(umax + 1, 0.0));
    for (std::size_t i = 0; i <= m; ++i)
        f[i][0] = 1; // with zero y-values every U is 0
    for (std::size_t j = 1; j <= n; ++j) {
        std::vector<std::vector<double>> g(m + 1, std::vector<double>(umax + 1, 0.0));
        g[0][0] = 1;
        for (std::size_t i = 1; i <= m; ++i)
            for (std::size_t k = 0; k <= i * j; ++k)
                g[i][k] = f[i][k] + (k >= j ? g[i - 1][k - j] : 0.0);
        f.swap(g);
    }
    const double total = std::accumulate(f[m].begin(), f[m].end(), 0.0);
    double le = 0;
    double ge = 0;
    for (std::size_t k = 0; k <= umax; ++k) {
        if (static_cast<double>(k) <= u + 1e-9)
            le += f[m][k];
        if (static_cast<double>(k) >= u - 1e-9)
            ge += f[m][k];
    }
    return std::min(1.0, 2.0 * std::min(le, ge) / total);
}

mann_whitney_result mann_whitney(const std::vector<double>& x, const std::vector<double>& y,
                                 std::size_t exact_max) {
    mann_whitney_result r;
    const std::size_t m = x.size();
    const std::size_t n = y.size();
    if (m == 0 || n == 0)
        return r;
    std::vector<double> all(x);
    all.insert(all.end(), y.begin(), y.end());
    double tie_term = 0;
    const std::vector<double> ranks = midranks(all, &tie_term);
    const double rank_sum_x = std::accumulate(ranks.begin(), ranks.begin() + m, 0.0);
    const double dm = static_cast<double>(m);
    const double dn = static_cast<double>(n);
    r.u_x = rank_sum_x - dm * (dm + 1) / 2;
    r.cliffs_delta = 2.0 * r.u_x / (dm * dn) - 1.0;
    if (m <= exact_max && n <= exact_max && tie_term == 0) {
        r.exact = true;
        r.p_value = mann_whitney_exact_p(r.u_x, m, n);
        return r;
    }
    const double big_n = dm + dn;
    const double mu = dm * dn / 2;
    const double var = dm * dn / 12.0 * ((big_n + 1) - tie_term / (big_n * (big_n - 1)));
    if (var <= 0) // every value tied: no evidence of a difference
        return r;
    const double diff = r.u_x - mu;
    const double corrected = std::max(0.0, std::abs(diff) - 0.5);
    r.z = std::copysign(corrected / std::sqrt(var), diff);
    const boost::math::normal_distribution<double> unit;
    r.p_value = std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(unit, std::abs(r.z))));
    return r;
}

std::string cliffs_delta_label(double delta) {
    const double a = std::abs(delta);
    if (a < 0.147)
        return "negligible";
    if (a < 0.33)
        return "small";
    if (a < 0.474)
        return "medium";
    return "large";
}

std::vector<double> holm_adjust(const std::vector<double>& p_values) {
    const std::size_t k = p_values.size();
    std::vector<std::size_t> order(k);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return p_values[a] < p_values[b]; });
    std::vector<double> adjusted(k);
    double running = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double p = std::min(1.0, static_cast<double>(k - i) * p_values[order[i]]);
        running = std::max(running, p);
        adjusted[order[i]] = running;
    }
    return adjusted;
}

} // namespace ringscale::analysis
