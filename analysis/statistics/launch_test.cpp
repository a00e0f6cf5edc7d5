#include "launch_test.hpp"

#include "descriptive.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <cmath>

namespace ringscale::analysis {

namespace {

struct moments {
    double mean = 0;
    double var = 0; ///< sample variance (n - 1)
    double n = 0;
};

moments log_median_moments(const launch_samples& s) {
    moments m;
    std::vector<double> logs;
    for (const auto& launch : s)
        if (!launch.empty())
            logs.push_back(std::log(median(launch)));
    m.n = static_cast<double>(logs.size());
    for (const double v : logs)
        m.mean += v / m.n;
    for (const double v : logs)
        m.var += (v - m.mean) * (v - m.mean) / (m.n - 1);
    return m;
}

/// Welch-Satterthwaite degrees of freedom and squared standard error of the difference.
struct welch_terms {
    double se2 = 0;
    double df = 0;
};

welch_terms welch(const moments& x, const moments& y) {
    welch_terms w;
    w.se2 = x.var / x.n + y.var / y.n;
    w.df = w.se2 * w.se2 /
           ((x.var / x.n) * (x.var / x.n) / (x.n - 1) + (y.var / y.n) * (y.var / y.n) / (y.n - 1));
    return w;
}

/// t(1 - alpha/2, df) + t(power, df): the distance, in standard errors, of a change that is
/// detected with probability `power`.
double critical_distance(double df, double alpha, double power) {
    const boost::math::students_t dist(df);
    return boost::math::quantile(dist, 1 - alpha / 2) + boost::math::quantile(dist, power);
}

} // namespace

double launch_log_sd(const launch_samples& s) {
    const moments m = log_median_moments(s);
    return m.n < 2 ? std::nan("") : std::sqrt(m.var);
}

double detectable_change(const launch_samples& a, const launch_samples& b, double alpha,
                         double power) {
    const moments x = log_median_moments(a);
    const moments y = log_median_moments(b);
    if (x.n < 2 || y.n < 2)
        return std::nan("");
    const welch_terms w = welch(x, y);
    if (!(w.se2 > 0))
        return 0;
    return std::expm1(critical_distance(w.df, alpha, power) * std::sqrt(w.se2));
}

std::size_t launches_needed(const launch_samples& a, const launch_samples& b, double change,
                            double alpha, double power, std::size_t cap) {
    const moments x = log_median_moments(a);
    const moments y = log_median_moments(b);
    if (x.n < 2 || y.n < 2 || !(change > 0))
        return 0;
    const double var = (x.var + y.var) / 2;
    const double target = std::log1p(change);
    for (std::size_t n = 2; n <= cap; ++n) {
        const double nd = static_cast<double>(n);
        if (critical_distance(2 * nd - 2, alpha, power) * std::sqrt(2 * var / nd) <= target)
            return n;
    }
    return cap + 1;
}

double welch_log_median_p(const launch_samples& a, const launch_samples& b) {
    const moments x = log_median_moments(a);
    const moments y = log_median_moments(b);
    if (x.n < 2 || y.n < 2)
        return 1;
    const welch_terms w = welch(x, y);
    if (!(w.se2 > 0))
        return x.mean == y.mean ? 1 : 0;
    const double t = (x.mean - y.mean) / std::sqrt(w.se2);
    const boost::math::students_t dist(w.df);
    return 2 * boost::math::cdf(boost::math::complement(dist, std::abs(t)));
}

} // namespace ringscale::analysis
