#include "bootstrap.hpp"

#include "descriptive.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ringscale::analysis {

std::uint64_t splitmix64::next() {
    std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void resample(const std::vector<double>& in, std::vector<double>& out, splitmix64& rng) {
    out.resize(in.size());
    for (double& v : out)
        v = in[rng.index(in.size())];
}

double median_inplace(std::vector<double>& values) {
    const std::size_t n = values.size();
    if (n == 0)
        return std::numeric_limits<double>::quiet_NaN();
    auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
    std::nth_element(values.begin(), mid, values.end());
    if (n % 2 == 1)
        return *mid;
    const double upper = *mid;
    const double lower = *std::max_element(values.begin(), mid);
    return (lower + upper) / 2;
}

interval percentile_interval(std::vector<double> replicates, double level) {
    std::sort(replicates.begin(), replicates.end());
    // Round the tail so that level 0.95 gives exactly 0.025, not 0.025000000000000022.
    const double tail = std::round((1.0 - level) / 2 * 1e12) / 1e12;
    return {quantile_sorted(replicates, tail), quantile_sorted(replicates, 1 - tail)};
}

interval bootstrap_two_sample(const std::vector<double>& a, const std::vector<double>& b,
                              const std::function<double(double, double)>& combine,
                              std::size_t replicates, std::uint64_t seed, double level) {
    splitmix64 rng(seed);
    std::vector<double> ra;
    std::vector<double> rb;
    std::vector<double> stats;
    stats.reserve(replicates);
    for (std::size_t i = 0; i < replicates; ++i) {
        resample(a, ra, rng);
        resample(b, rb, rng);
        stats.push_back(combine(median_inplace(ra), median_inplace(rb)));
    }
    return percentile_interval(std::move(stats), level);
}

} // namespace ringscale::analysis
