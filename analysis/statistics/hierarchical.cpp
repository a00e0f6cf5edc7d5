#include "hierarchical.hpp"

#include <algorithm>
#include <cmath>

namespace ringscale::analysis {

launch_samples launch_steps(const std::vector<const case_data*>& launches) {
    launch_samples out;
    for (const case_data* c : launches)
        if (!c->step_s.empty())
            out.push_back(c->step_s);
    return out;
}

void resample_two_level(const launch_samples& in, std::vector<double>& out, splitmix64& rng) {
    out.clear();
    if (in.size() == 1) { // no launch draw: exactly the one-level iteration bootstrap
        resample(in.front(), out, rng);
        return;
    }
    for (std::size_t l = 0; l < in.size(); ++l) {
        const std::vector<double>& launch = in[rng.index(in.size())];
        for (std::size_t i = 0; i < launch.size(); ++i)
            out.push_back(launch[rng.index(launch.size())]);
    }
}

double pooled_median(const launch_samples& in) {
    std::vector<double> all;
    for (const auto& launch : in)
        all.insert(all.end(), launch.begin(), launch.end());
    return median_inplace(all);
}

std::vector<double> two_level_median_replicates(const launch_samples& a, std::size_t replicates,
                                                std::uint64_t seed) {
    splitmix64 rng(seed);
    std::vector<double> ra;
    std::vector<double> stats;
    stats.reserve(replicates);
    for (std::size_t i = 0; i < replicates; ++i) {
        resample_two_level(a, ra, rng);
        stats.push_back(median_inplace(ra));
    }
    return stats;
}

median_pairs two_level_median_pairs(const launch_samples& a, const launch_samples& b,
                                    std::size_t replicates, std::uint64_t seed) {
    splitmix64 rng(seed);
    std::vector<double> ra;
    std::vector<double> rb;
    median_pairs out;
    out.a.reserve(replicates);
    out.b.reserve(replicates);
    for (std::size_t i = 0; i < replicates; ++i) {
        resample_two_level(a, ra, rng);
        resample_two_level(b, rb, rng);
        out.a.push_back(median_inplace(ra));
        out.b.push_back(median_inplace(rb));
    }
    return out;
}

std::vector<double> combine_pairs(const median_pairs& m,
                                  const std::function<double(double, double)>& combine) {
    std::vector<double> out(m.a.size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = combine(m.a[i], m.b[i]);
    return out;
}

std::vector<double> two_level_replicates(const launch_samples& a, const launch_samples& b,
                                         const std::function<double(double, double)>& combine,
                                         std::size_t replicates, std::uint64_t seed) {
    return combine_pairs(two_level_median_pairs(a, b, replicates, seed), combine);
}

double bootstrap_p_value(const std::vector<double>& replicates, double null_value) {
    std::size_t below = 0;
    std::size_t above = 0;
    for (double r : replicates) {
        below += r <= null_value;
        above += r >= null_value;
    }
    const double b = static_cast<double>(replicates.size());
    const double tail = static_cast<double>(std::min(below, above) + 1) / (b + 1);
    return std::min(1.0, 2 * tail);
}

std::size_t replicates_for(std::size_t requested, std::size_t tests, double alpha) {
    // p >= 2 / (B + 1); Holm multiplies the smallest by `tests`: 2 tests / (B + 1) <= alpha / 10.
    const double needed = std::ceil(20.0 * static_cast<double>(tests) / alpha) - 1;
    return std::max(requested, static_cast<std::size_t>(std::clamp(needed, 0.0, 20000.0)));
}

} // namespace ringscale::analysis
