#include "change_points.hpp"

#include "robust_levels.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/descriptive.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <utility>

namespace ringscale::analysis::history {

namespace {

std::vector<double> capped_statistics(const std::vector<double>& y, double cap, std::size_t m);

/// Q(tau) of every split of `y` under `stat` (the values are already ranks or logs; `cap`:
/// the capped deviations' cap, fixed for a segment's permutations).
std::vector<double> statistics(const std::vector<double>& y, change_statistic stat, double cap,
                               std::size_t m) {
    if (stat == change_statistic::capped)
        return capped_statistics(y, cap, m);
    return stat == change_statistic::energy1 ? energy1_statistics(y) : energy_statistics(y);
}

/// A split: y[0, tau) against y[tau, kappa), and its statistic.
struct split {
    std::size_t tau = 0, kappa = 0;
    double q = -std::numeric_limits<double>::infinity();
};

/// The best split of `y` among those leaving m on each side. (Trying every end kappa of the
/// right side too, as E-divisive does, found excursions that return, but its larger null
/// maximum lost a 50x step of 9 launches after 5 on a bimodal baseline: dropped.)
split best_split(const std::vector<double>& y, change_statistic stat, std::size_t m,
                 double cap = 0) {
    const std::size_t n = y.size();
    split best{0, n};
    const std::vector<double> q = statistics(y, stat, cap, m);
    for (std::size_t tau = m; tau + m <= n; ++tau)
        if (q[tau - 1] > best.q)
            best = {tau, n, q[tau - 1]};
    return best;
}

void shuffle(std::vector<double>& y, splitmix64& rng) {
    for (std::size_t i = y.size(); i > 1; --i)
        std::swap(y[i - 1], y[rng.index(i)]);
}

/// Permutation p of the largest Q of `y`, stopping once it cannot reach alpha.
double permutation_p(std::vector<double> y, double observed, const change_options& opt,
                     std::size_t m, double cap, splitmix64& rng) {
    const auto limit =
        static_cast<std::size_t>(opt.alpha * static_cast<double>(opt.permutations + 1));
    std::size_t exceed = 0, done = 0;
    for (; done < opt.permutations; ++done) {
        shuffle(y, rng);
        exceed += best_split(y, opt.statistic, m, cap).q >= observed;
        if (exceed > limit) { // p > alpha already: no need to go on
            ++done;
            break;
        }
    }
    return static_cast<double>(exceed + 1) / static_cast<double>(done + 1);
}

/// The capped absolute deviation of y about `center`: min(|r|, cap) + 0.1 |r| a launch.
double capped_cost(const std::vector<double>& y, std::size_t a, std::size_t b, double center,
                   double cap) {
    double cost = 0;
    for (std::size_t i = a; i < b; ++i) {
        const double r = std::abs(y[i] - center);
        cost += std::min(r, cap) + 0.1 * r;
    }
    return cost;
}

/// The cap of the capped deviations: 3 launch-to-launch noises of y in its order (from
/// successive differences, so a step does not widen it); infinite when y does not vary.
double noise_cap(const std::vector<double>& y) {
    std::vector<double> d;
    for (std::size_t i = 1; i < y.size(); ++i)
        d.push_back(std::abs(y[i] - y[i - 1]));
    const double noise = d.empty() ? 0 : 1.4826 * median(d) / std::sqrt(2.0);
    return noise > 0 ? 3 * noise : std::numeric_limits<double>::infinity();
}

/// For each split tau = 1..n-1 (element tau - 1), how much splitting y there lowers its cost
/// in absolute deviations r about each side's median, each launch costing min(|r|, 3 noise)
/// + 0.1 |r| (noise: y's launch-to-launch noise, from successive differences): a spike costs
/// about the cap on either side, so it cannot pull the split across a step's launches, each
/// of which costs the cap and more on the wrong side; the 0.1 |r| decides between splits the
/// cap alone cannot (a launch on the upper of two baseline levels just before a large step,
/// which plain absolute deviations place right, a capped loss at random). O(n^2).
std::vector<double> capped_statistics(const std::vector<double>& y, double cap, std::size_t m) {
    const std::size_t n = y.size();
    const std::vector<double> left = prefix_medians(y);
    const std::vector<double> right = prefix_medians(std::vector<double>(y.rbegin(), y.rend()));
    const double none = n ? capped_cost(y, 0, n, left[n - 1], cap) : 0;
    std::vector<double> q(n > 0 ? n - 1 : 0, 0); // only m <= tau <= n - m: the splits used
    for (std::size_t tau = std::max<std::size_t>(m, 1); tau + m <= n && tau < n; ++tau)
        q[tau - 1] = none - capped_cost(y, 0, tau, left[tau - 1], cap) -
                     capped_cost(y, tau, n, right[n - tau - 1], cap);
    return q;
}

/// Where y splits best in the capped deviations (m on each side at least).
std::size_t l1_split(const std::vector<double>& y, std::size_t m) {
    const std::vector<double> q = capped_statistics(y, noise_cap(y), m);
    std::size_t best = m;
    for (std::size_t tau = m; tau + m <= y.size(); ++tau)
        if (q[tau - 1] > q[best - 1])
            best = tau;
    return best;
}

/// Where the change of `best` is placed in the log values y: the ranks test whether the
/// segment changes, and least absolute deviations over y[0, kappa) place it (ranks alone
/// move a large step towards the middle, where the new level's lowest launches lie).
std::size_t placed(const std::vector<double>& y, const split& best, change_statistic stat,
                   std::size_t m) {
    if (stat != change_statistic::ranks)
        return best.tau;
    return l1_split(
        std::vector<double>(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(best.kappa)), m);
}

/// The values the statistic takes of the log launch medians `y` of one segment.
std::vector<double> values_of(std::vector<double> y, change_statistic stat, std::size_t m) {
    switch (stat) {
    case change_statistic::ranks:
    case change_statistic::ranks_only:
        return mid_ranks(y);
    case change_statistic::cleaned:
        return cleaned(std::move(y), m);
    default:
        return y;
    }
}

/// The best split's Q of each of `count` permutations of `r`, with log(1 + step) added from
/// the middle on; with `located`, a Q whose split is more than one launch from the middle
/// counts as -inf (not found there). Common random numbers: the same permutations per step.
/// `decided` (if set) ends the replicates early once it returns true for those so far.
std::vector<double> planted_q(const std::vector<double>& r, double log_step, std::size_t count,
                              bool located, const change_options& opt, std::size_t m,
                              const std::function<bool(const std::vector<double>&)>& decided = {}) {
    splitmix64 rng(opt.seed ^ 0x9e3779b97f4a7c15ULL);
    std::vector<double> y = r, out;
    const std::size_t half = r.size() / 2;
    if (log_step == 0 && !located && opt.statistic != change_statistic::cleaned) {
        // The null: ranks (and logs) of a permutation are the permuted ranks: O(n) each.
        y = values_of(r, opt.statistic, m);
        const double cap = noise_cap(r);
        for (std::size_t k = 0; k < count; ++k) {
            shuffle(y, rng);
            out.push_back(best_split(y, opt.statistic, m, cap).q);
        }
        return out;
    }
    for (std::size_t k = 0; k < count; ++k) {
        shuffle(y, rng);
        std::vector<double> z = y;
        for (std::size_t i = half; i < z.size(); ++i)
            z[i] += log_step;
        const split b = best_split(values_of(z, opt.statistic, m), opt.statistic, m, noise_cap(z));
        const double q = b.q;
        // (over 400 launches the ranks' own split: placing 200 replicates at O(n^2) each
        // would cost minutes on a long series)
        const std::size_t tau = z.size() > 400 ? b.tau : placed(z, b, opt.statistic, m);
        const bool near = tau + 1 >= half && tau <= half + 1;
        out.push_back(located && !near ? -std::numeric_limits<double>::infinity() : q);
        if (decided && decided(out))
            break;
    }
    return out;
}

/// The options as applied to a segment of n launches: the capped deviations cost O(n^2) a
/// permutation, so a segment of more than 400 launches is tested by its ranks (O(n)) and
/// placed by the capped deviations once.
change_options applied(change_options opt, std::size_t n) {
    if (opt.statistic == change_statistic::capped && n > 400)
        opt.statistic = change_statistic::ranks;
    return opt;
}

} // namespace

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

std::vector<change_point> find_change_points(const std::vector<double>& x,
                                             const change_options& options) {
    std::vector<double> logx(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        logx[i] = std::log(x[i]);
    const std::size_t m = std::max<std::size_t>(1, options.min_segment);
    splitmix64 rng(options.seed);
    std::vector<change_point> found;
    std::vector<std::pair<std::size_t, std::size_t>> todo{{0, x.size()}};
    while (!todo.empty()) {
        const auto [a, b] = todo.back();
        todo.pop_back();
        if (b - a < 2 * m)
            continue;
        const change_options opt = applied(options, b - a);
        const std::vector<double> seg(logx.begin() + static_cast<std::ptrdiff_t>(a),
                                      logx.begin() + static_cast<std::ptrdiff_t>(b));
        const std::vector<double> y = values_of(seg, opt.statistic, m);
        const double cap = noise_cap(seg);
        const split best = best_split(y, opt.statistic, m, cap);
        const double q = best.q;
        if (!(q > 0))
            continue;
        const double p = permutation_p(y, q, opt, m, cap, rng);
        if (p > opt.alpha)
            continue;
        // Placed only once the split is significant: over 400 launches the placement costs
        // O(n^2) (10,000 launches: 10^8 a series), and most segments have no change.
        const std::size_t tau = placed(seg, best, opt.statistic, m);
        const double effect = median_of(x, a + tau, b) / median_of(x, a, a + tau) - 1;
        if (!(std::abs(effect) >= opt.min_effect))
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

double detectable_step(const std::vector<double>& all, const std::vector<change_point>& all_cps,
                       const change_options& options) {
    // The newest 100 launches (and their changes): what the newest launches can show, at a
    // cost that does not grow with the series (the capped deviations cost O(n^2) each).
    const std::size_t first = all.size() > 100 ? all.size() - 100 : 0;
    const std::vector<double> x(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
    std::vector<change_point> cps;
    for (const change_point& c : all_cps)
        if (c.index > first)
            cps.push_back({c.index - first, c.p});
    const change_options opt = applied(options, x.size());
    const std::size_t m = std::max<std::size_t>(1, opt.min_segment), n = x.size();
    const double none = std::numeric_limits<double>::quiet_NaN();
    if (n < 2 * m)
        return none;
    // The residuals: each launch's log less its segment's median log.
    std::vector<double> r;
    for (std::size_t k = 0, a = 0; k <= cps.size(); ++k) {
        const std::size_t b = k < cps.size() ? cps[k].index : n;
        std::vector<double> seg;
        for (std::size_t i = a; i < b; ++i)
            seg.push_back(std::log(x[i]));
        const double mid = seg.empty() ? 0 : median(seg);
        for (const double v : seg)
            r.push_back(v - mid);
        a = b;
    }
    // The null's critical value: the k-th largest Q of the permutations, as the test rejects
    // when fewer than alpha (P + 1) permutations reach the observed Q.
    std::vector<double> null = planted_q(r, 0, opt.permutations, false, opt, m);
    const auto k = std::max<std::size_t>(
        1, static_cast<std::size_t>(opt.alpha * static_cast<double>(opt.permutations + 1)));
    std::nth_element(null.begin(), null.begin() + static_cast<std::ptrdiff_t>(k - 1), null.end(),
                     std::greater<>());
    const double critical = null[k - 1];
    // Whether a step is found with 90% power in 200 replicates; the replicates stop once the
    // answer is known either way (the same answer: replicate k depends on the first k only).
    constexpr std::size_t replicates = 200;
    const auto reaches = [](std::size_t found) {
        return static_cast<double>(found) / static_cast<double>(replicates) >= 0.9;
    };
    auto powerful = [&](double log_step) {
        std::size_t found = 0;
        bool yes = false;
        const auto decided = [&](const std::vector<double>& q) {
            found += q.back() > critical;
            yes = reaches(found);
            return yes || !reaches(found + replicates - q.size());
        };
        planted_q(r, log_step, replicates, true, opt, m, decided);
        return yes;
    };
    double lo = std::log1p(opt.min_effect), hi = std::log(1000.0);
    if (powerful(lo))
        return opt.min_effect;
    if (!powerful(hi))
        return none;
    for (int i = 0; i < 12; ++i) {
        const double mid = (lo + hi) / 2;
        (powerful(mid) ? hi : lo) = mid;
    }
    return std::expm1(hi);
}

} // namespace ringscale::analysis::history
