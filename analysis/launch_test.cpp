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

} // namespace

double welch_log_median_p(const launch_samples& a, const launch_samples& b) {
    const moments x = log_median_moments(a);
    const moments y = log_median_moments(b);
    if (x.n < 2 || y.n < 2)
        return 1;
    const double se2 = x.var / x.n + y.var / y.n;
    if (!(se2 > 0))
        return x.mean == y.mean ? 1 : 0;
    const double t = (x.mean - y.mean) / std::sqrt(se2);
    // Welch-Satterthwaite degrees of freedom.
    const double df =
        se2 * se2 /
        ((x.var / x.n) * (x.var / x.n) / (x.n - 1) + (y.var / y.n) * (y.var / y.n) / (y.n - 1));
    const boost::math::students_t dist(df);
    return 2 * boost::math::cdf(boost::math::complement(dist, std::abs(t)));
}

} // namespace ringscale::analysis
