// bench_history_rates: synthetic series of launch medians (steady, bimodal or spiked
// baselines, with or without a step).
#include "tests/bench/history_rates.hpp"

#include <cmath>

namespace ringscale::bench::history_rates {

double uniform(analysis::splitmix64& rng) {
    return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53;
}

double normal(analysis::splitmix64& rng) {
    return std::sqrt(-2 * std::log(uniform(rng))) * std::cos(2 * M_PI * uniform(rng));
}

const char* const baseline_names[3] = {"steady", "bimodal", "spike"};

double shape::noise() const {
    const double l = std::log(gap);
    return std::sqrt(cv * cv + upper * (1 - upper) * l * l);
}

shape draw_shape(analysis::splitmix64& rng, baseline b, std::int64_t n) {
    shape s;
    s.base = b;
    s.cv = 0.02 + 0.08 * uniform(rng);
    if (b == baseline::bimodal) {
        s.gap = 1.15 + 0.45 * uniform(rng);
        s.upper = 0.2 + 0.3 * uniform(rng);
    }
    if (b == baseline::spike) {
        s.spike = 1.5 + 8.5 * uniform(rng);
        s.spike_at = static_cast<std::int64_t>(uniform(rng) * static_cast<double>(n));
    }
    s.step_at = 5 + static_cast<std::int64_t>(uniform(rng) * static_cast<double>(n - 9));
    return s;
}

std::vector<double> draw(analysis::splitmix64& rng, const shape& s, std::int64_t n) {
    std::vector<double> x;
    for (std::int64_t j = 0; j < n; ++j) {
        double f = std::exp(s.cv * normal(rng));
        if (uniform(rng) < s.upper)
            f *= s.gap;
        if (j == s.spike_at)
            f *= s.spike;
        if (s.step > 0 && j >= s.step_at)
            f *= 1 + s.step;
        x.push_back(1e-3 * f);
    }
    return x;
}

} // namespace ringscale::bench::history_rates
