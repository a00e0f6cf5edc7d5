// The capped deviations (analysis/history/capped_deviations), an O(n log n) sweep,
// against their definition computed directly in O(n^2): the sorted lower medians of each
// side and the sum of min(|r|, cap) + 0.1 |r| over its launches, on series with ties, steps,
// spikes, a finite and an infinite cap; and the noise cap against analysis::median.
#include "analysis/history/capped_deviations.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/descriptive.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace ringscale::analysis;
using namespace ringscale::analysis::history;

namespace {

/// The cost of y[a, b) about its lower median, from the definition.
double brute_cost(const std::vector<double>& y, std::size_t a, std::size_t b, double cap) {
    std::vector<double> side(y.begin() + static_cast<std::ptrdiff_t>(a),
                             y.begin() + static_cast<std::ptrdiff_t>(b));
    std::sort(side.begin(), side.end());
    const double c = side[(side.size() - 1) / 2];
    double cost = 0;
    for (const double v : side)
        cost += std::min(std::abs(v - c), cap) + 0.1 * std::abs(v - c);
    return cost;
}

/// Series of n launches: log-normal noise, rounded to `grain` (ties), a step at n/2 and a
/// spike at 1 when asked.
std::vector<double> drawn(std::size_t n, std::uint64_t seed, double grain, bool step, bool spike) {
    splitmix64 rng(seed);
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double u = (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53;
        double v = -11.5 + 0.05 * (u - 0.5); // log seconds: the sums must not lose them
        if (grain > 0)
            v = std::round(v / grain) * grain;
        y[i] = v + (step && i >= n / 2 ? 0.7 : 0) + (spike && i == 1 ? 2.0 : 0);
    }
    return y;
}

} // namespace

TEST(history_capped, every_split_matches_the_definition) {
    const double inf = std::numeric_limits<double>::infinity();
    int checked = 0;
    for (std::size_t n : {1, 2, 3, 7, 14, 30, 101}) {
        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
            const auto y = drawn(n, seed, seed % 3 == 0 ? 0.01 : 0, seed % 2 == 0, seed % 4 == 1);
            for (const double cap : {0.02, 0.3, inf}) {
                const std::vector<double> pre = prefix_capped_costs(y, cap);
                ASSERT_EQ(pre.size(), n);
                for (std::size_t k = 1; k <= n; ++k, ++checked)
                    EXPECT_NEAR(pre[k - 1], brute_cost(y, 0, k, cap), 1e-9) << n << " " << k;
                const std::vector<double> q = capped_statistics(y, cap, 3);
                ASSERT_EQ(q.size(), n > 0 ? n - 1 : 0);
                for (std::size_t tau = 1; tau < n; ++tau) {
                    const double want = tau >= 3 && tau + 3 <= n ? brute_cost(y, 0, n, cap) -
                                                                       brute_cost(y, 0, tau, cap) -
                                                                       brute_cost(y, tau, n, cap)
                                                                 : 0;
                    EXPECT_NEAR(q[tau - 1], want, 1e-9) << n << " " << tau << " cap " << cap;
                }
            }
        }
    }
    EXPECT_GT(checked, 1000);
}

TEST(history_capped, a_step_is_the_largest_reduction) {
    const auto y = drawn(40, 9, 0, true, true);
    const std::vector<double> q = capped_statistics(y, noise_cap(y), 3);
    EXPECT_EQ(std::max_element(q.begin(), q.end()) - q.begin() + 1, 20);
}

TEST(history_capped, the_cap_is_three_noises_of_successive_differences) {
    for (std::size_t n : {2, 3, 8, 9, 30}) {
        const auto y = drawn(n, n, 0, true, false);
        std::vector<double> d;
        for (std::size_t i = 1; i < n; ++i)
            d.push_back(std::abs(y[i] - y[i - 1]));
        EXPECT_DOUBLE_EQ(noise_cap(y), 3 * 1.4826 * median(d) / std::sqrt(2.0)) << n;
    }
    EXPECT_TRUE(std::isinf(noise_cap({1.0, 1.0, 1.0, 1.0})));
    EXPECT_TRUE(std::isinf(noise_cap({1.0})));
}
