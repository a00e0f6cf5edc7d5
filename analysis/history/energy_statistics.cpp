// The two-sample statistics of tests/bench/history_rates' baselines and the ranks' values
// (analysis/history/change_points.hpp): the energy statistic with exponents 2 and 1, and
// mid-ranks. Pure.
#include "change_points.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ringscale::analysis::history {

std::vector<double> mid_ranks(const std::vector<double>& y) {
    std::vector<std::size_t> order(y.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return y[a] < y[b]; });
    std::vector<double> rank(y.size());
    for (std::size_t i = 0, j = 0; i < order.size(); i = j) {
        for (j = i + 1; j < order.size() && y[order[j]] == y[order[i]];)
            ++j;
        for (std::size_t k = i; k < j; ++k) // ranks i+1 .. j share their mean
            rank[order[k]] = static_cast<double>(i + j + 1) / 2;
    }
    return rank;
}

/// Q(tau) for every tau: tau (n - tau) / n x (2 E|X - Y|^2 - E|X - X'|^2 - E|Y - Y'|^2)
/// = tau (n - tau) / n x 2 (mean_l - mean_r)^2, by prefix sums.
std::vector<double> energy_statistics(const std::vector<double>& y) {
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

/// As above with |.| for |.|^2; moving launch tau from the right to the left side changes
/// the within and across sums by its distances to each side, so all splits take O(n^2).
std::vector<double> energy1_statistics(const std::vector<double>& y) {
    const std::size_t n = y.size();
    std::vector<double> q(n > 0 ? n - 1 : 0, 0);
    double wl = 0, wr = 0, cross = 0; // sums over unordered pairs
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
            wr += std::abs(y[i] - y[j]);
    const double dn = static_cast<double>(n);
    for (std::size_t tau = 1; tau < n; ++tau) {
        const std::size_t t = tau - 1; // moves from the right side to the left
        double to_left = 0, to_right = 0;
        for (std::size_t i = 0; i < t; ++i)
            to_left += std::abs(y[i] - y[t]);
        for (std::size_t j = t + 1; j < n; ++j)
            to_right += std::abs(y[j] - y[t]);
        wl += to_left;               // t's pairs with the left were across
        cross += to_right - to_left; // and its pairs with the right now are
        wr -= to_right;
        const double a = static_cast<double>(tau), b = dn - a;
        q[tau - 1] = a * b / dn * (2 * cross / (a * b) - 2 * wl / (a * a) - 2 * wr / (b * b));
    }
    return q;
}

} // namespace ringscale::analysis::history
