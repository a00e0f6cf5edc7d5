#include "change_points.hpp"

#include "capped_deviations.hpp"
#include "robust_levels.hpp"
#include "small_sample.hpp"

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
split best_of(const std::vector<double>& q, std::size_t m) {
    const std::size_t n = q.size() + 1;
    split best{0, n};
    for (std::size_t tau = m; tau + m <= n; ++tau)
        if (q[tau - 1] > best.q)
            best = {tau, n, q[tau - 1]};
    return best;
}

split best_split(const std::vector<double>& y, change_statistic stat, std::size_t m,
                 double cap = 0) {
    return best_of(statistics(y, stat, cap, m), m);
}

template <typename T>
void shuffle(std::vector<T>& y, splitmix64& rng) {
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

/// The best split's Q of each of `count` permutations of `r` (the permutation null of
/// detectable_step; its first permutations are the replicates' of `planted`).
std::vector<double> null_q(const std::vector<double>& r, std::size_t count,
                           const change_options& opt, std::size_t m) {
    splitmix64 rng(opt.seed ^ 0x9e3779b97f4a7c15ULL);
    std::vector<double> y = r, out;
    const double cap = noise_cap(r);
    if (opt.statistic == change_statistic::capped) {
        // Each permutation sorted from r's order in O(n) (capped_deviations).
        const std::vector<std::size_t> r_order = ascending(r);
        std::vector<std::size_t> perm(r.size()), order;
        std::iota(perm.begin(), perm.end(), 0);
        for (std::size_t k = 0; k < count; ++k) {
            shuffle(perm, rng);
            permuted(r, r_order, perm, 0, 0, y, order);
            out.push_back(best_of(capped_statistics(y, order, cap, m), m).q);
        }
        return out;
    }
    // Ranks (and logs) of a permutation are the permuted ranks: O(n) each.
    const bool cleaned = opt.statistic == change_statistic::cleaned;
    if (!cleaned)
        y = values_of(r, opt.statistic, m);
    for (std::size_t k = 0; k < count; ++k) {
        shuffle(y, rng);
        out.push_back(cleaned ? best_split(values_of(y, opt.statistic, m), opt.statistic, m).q
                              : best_split(y, opt.statistic, m, cap).q);
    }
    return out;
}

/// The best split of the permutation `perm` of r with log(1 + step) added from the middle on,
/// placed as the method places it, and its Q (r_order: r's ascending order).
split planted(const std::vector<double>& r, const std::vector<std::size_t>& r_order,
              const std::vector<std::size_t>& perm, double log_step, const change_options& opt,
              std::size_t m, bool small) {
    std::vector<double> z;
    std::vector<std::size_t> order;
    permuted(r, r_order, perm, r.size() / 2, log_step, z, order);
    if (small) {
        const small_split b = small_best(z, m);
        return {l1_split(z, m), z.size(), b.t};
    }
    if (opt.statistic == change_statistic::capped)
        return best_of(capped_statistics(z, order, noise_cap(z), m), m);
    split b = best_split(values_of(z, opt.statistic, m), opt.statistic, m, noise_cap(z));
    // (over 400 launches the ranks' own split: placing 200 replicates at O(n^2) each
    // would cost minutes on a long series)
    if (z.size() <= 400)
        b.tau = placed(z, b, opt.statistic, m);
    return b;
}

/// The options as applied to a segment of n launches: a segment of more than 400 launches is
/// tested by its ranks (O(n)) and placed by the capped deviations once (chosen when the
/// capped deviations cost O(n^2) a permutation; issue 50 made them O(n log n)).
change_options applied(change_options opt, std::size_t n) {
    if (opt.statistic == change_statistic::capped && n > 400)
        opt.statistic = change_statistic::ranks;
    return opt;
}

/// The best split of the segment `seg` (log launch medians) and its p: a whole series
/// (`whole`) below small_sample_limit launches by the small-sample test, else the
/// permutation test of opt.statistic (p 1: no split). The segments between changes stay with
/// the permutation test, exact for any baseline: within a series that moved, the few
/// launches of a baseline on two levels can line up as a step the Gaussian null of the
/// small-sample test calls significant.
std::pair<std::size_t, double> tested(const std::vector<double>& seg, bool whole,
                                      const change_options& options, std::size_t m,
                                      splitmix64& rng) {
    if (whole && seg.size() < small_sample_limit(options.alpha, m)) {
        // Placed by the capped deviations, as a long segment: a median ignores one launch
        // of the other level, so the statistic alone puts an edge step a launch inwards.
        const small_split best = small_best(seg, m);
        const double p = small_p(best.t, seg.size(), m);
        return {p <= options.alpha ? l1_split(seg, m) : best.tau, p};
    }
    const change_options opt = applied(options, seg.size());
    const std::vector<double> y = values_of(seg, opt.statistic, m);
    const double cap = noise_cap(seg);
    const split best = best_split(y, opt.statistic, m, cap);
    if (!(best.q > 0))
        return {0, 1.0};
    // No drawn p below the exact one of the ideal ordering of its split (1 / C(n, tau): the
    // observed ordering's sides, each in any order), which the permutations drawn can miss.
    const double p = std::max(permutation_p(y, best.q, opt, m, cap, rng),
                              permutation_floor(seg.size(), best.tau) / 2);
    // Placed only once the split is significant: over 400 launches the placement costs a
    // sort of the segment, and most segments have no change.
    return {p <= opt.alpha ? placed(seg, best, opt.statistic, m) : best.tau, p};
}

} // namespace

change_options per_series(change_options opt) {
    const std::size_t k = std::max<std::size_t>(1, opt.family);
    opt.alpha /= static_cast<double>(k);
    opt.permutations = (opt.permutations + 1) * k - 1;
    opt.family = 1;
    return opt;
}

std::vector<change_point> find_change_points(const std::vector<double>& x,
                                             const change_options& all) {
    const change_options options = per_series(all);
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
        const std::vector<double> seg(logx.begin() + static_cast<std::ptrdiff_t>(a),
                                      logx.begin() + static_cast<std::ptrdiff_t>(b));
        const auto [tau, p] = tested(seg, a == 0 && b == x.size(), options, m, rng);
        if (!(p <= options.alpha))
            continue;
        const double effect = median_of(x, a + tau, b) / median_of(x, a, a + tau) - 1;
        if (!(std::abs(effect) >= options.min_effect))
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

double min_detectable_step(std::size_t n, double sigma, const change_options& all) {
    const change_options opt = per_series(all);
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
    // cost that does not grow with the series.
    const std::size_t first = all.size() > 100 ? all.size() - 100 : 0;
    const std::vector<double> x(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
    std::vector<change_point> cps;
    for (const change_point& c : all_cps)
        if (c.index > first)
            cps.push_back({c.index - first, c.p});
    const change_options opt = applied(per_series(options), x.size());
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
    // The test the verdict applies: below small_sample_limit the small-sample test's p;
    // else the null's critical value, the k-th largest Q of the permutations, as the test
    // rejects when fewer than alpha (P + 1) permutations reach the observed Q, and a split
    // whose ideal ordering is rarer than alpha among all orderings (2 / C(n, tau)), as the
    // verdict's permutations include the observed ordering.
    const bool small = n < small_sample_limit(opt.alpha, m);
    double critical = 0;
    if (!small) {
        // At a night's split alpha the verdict's permutations grow with the series judged;
        // the critical value needs fewer: --permutations, or 2 / alpha (its 2nd largest)
        // where that is more (56 series of 100 launches: 5x less time than 56,000).
        const std::size_t count =
            std::min(opt.permutations,
                     std::max(options.permutations, static_cast<std::size_t>(2 / opt.alpha)));
        std::vector<double> null = null_q(r, count, opt, m);
        const auto k = std::max<std::size_t>(
            1, static_cast<std::size_t>(opt.alpha * static_cast<double>(count + 1)));
        std::nth_element(null.begin(), null.begin() + static_cast<std::ptrdiff_t>(k - 1),
                         null.end(), std::greater<>());
        critical = null[k - 1];
    }
    const auto rejects = [&](const split& b) {
        if (small)
            return small_p(b.q, n, m) <= opt.alpha;
        return b.q > critical && permutation_floor(n, b.tau) <= opt.alpha;
    };
    // Replicate j: the j-th of the null's permutations with the step planted; found when its
    // best split passes the critical value within one launch of the middle. Each replicate
    // is found from some step on (a larger step moves its split's Q up and towards the
    // middle), so what it showed at one step answers for the steps beyond: found at s, found
    // above s; missed at s, missed below s. Only the replicates between are drawn again.
    constexpr std::size_t replicates = 200;
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<std::size_t> r_order = ascending(r);
    std::vector<std::vector<std::size_t>> perms;
    std::vector<double> found_from(replicates, inf), missed_to(replicates, -inf);
    splitmix64 rng(opt.seed ^ 0x9e3779b97f4a7c15ULL);
    const std::size_t half = n / 2;
    const auto found = [&](std::size_t j, double log_step) {
        if (log_step >= found_from[j] || log_step <= missed_to[j])
            return log_step >= found_from[j];
        while (perms.size() <= j) { // the null's permutations, in its order
            std::vector<std::size_t> p(n);
            if (perms.empty())
                std::iota(p.begin(), p.end(), 0);
            else
                p = perms.back();
            shuffle(p, rng);
            perms.push_back(std::move(p));
        }
        const split b = planted(r, r_order, perms[j], log_step, opt, m, small);
        const bool yes = b.tau + 1 >= half && b.tau <= half + 1 && rejects(b);
        (yes ? found_from[j] : missed_to[j]) = log_step;
        return yes;
    };
    // Whether a step is found with 90% power in the replicates; they stop once the answer is
    // known either way (the same answer: replicate j depends on the first j only).
    const auto reaches = [](std::size_t hits) {
        return static_cast<double>(hits) / static_cast<double>(replicates) >= 0.9;
    };
    const auto powerful = [&](double log_step) {
        std::size_t hits = 0;
        for (std::size_t j = 0; j < replicates; ++j) {
            hits += found(j, log_step);
            if (reaches(hits) || !reaches(hits + replicates - j - 1))
                return reaches(hits);
        }
        return reaches(hits);
    };
    // Up from min_effect, doubling log(1 + step) while it is missed (cheap: the replicates
    // stop after 21 misses), then bisection (geometric) to 2% of log(1 + step).
    const double top = std::log(1000.0);
    double lo = std::log1p(opt.min_effect), hi = lo;
    if (powerful(lo))
        return opt.min_effect;
    do {
        if (hi >= top)
            return none;
        lo = hi;
        hi = std::min(2 * hi, top);
    } while (!powerful(hi));
    while (hi > 1.02 * lo) {
        const double mid = std::sqrt(lo * hi);
        (powerful(mid) ? hi : lo) = mid;
    }
    return std::expm1(hi);
}

} // namespace ringscale::analysis::history
