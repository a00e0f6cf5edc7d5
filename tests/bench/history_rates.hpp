// bench_history_rates' pieces: how a synthetic series of launch medians is drawn
// (history_rates_draw.cpp), the rates per kind of series and the detectable table
// (history_rates_kinds.cpp), and the small series (history_rates_small.cpp). main and the
// options are in history_rates.cpp.
#pragma once

#include "analysis/history/change_points.hpp"
#include "analysis/statistics/bootstrap.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::bench::history_rates {

/// A uniform draw in (0, 1).
double uniform(analysis::splitmix64& rng);

/// A standard normal draw (Box-Muller, two uniform draws).
double normal(analysis::splitmix64& rng);

enum class baseline { steady, bimodal, spike };
extern const char* const baseline_names[3];

/// How one series is drawn: its noise, its second level or spike, and its step.
struct shape {
    baseline base = baseline::steady;
    double cv = 0.05, gap = 1, upper = 0, spike = 1;
    std::int64_t spike_at = -1, step_at = -1;
    double step = 0;
    /// The launch-to-launch CV of the baseline (log SD; the two levels count).
    double noise() const;
};

/// A shape of baseline b for a series of n launches: CV, levels or spike drawn, the step's
/// launch drawn from 5 .. n-5 (its size is left 0: A/A).
shape draw_shape(analysis::splitmix64& rng, baseline b, std::int64_t n);

/// n launch medians (seconds, about 1 ms) drawn from shape s.
std::vector<double> draw(analysis::splitmix64& rng, const shape& s, std::int64_t n);

/// The method's name as the tables show it.
const char* name_of(analysis::history::change_statistic s);

/// Prints the table of every kind (baseline x A/A and steps of 1.2x, 2x, 20x) for each method
/// of `methods`, `count` series of n launches a kind; true when the first method meets its
/// goals on every kind (A/A flagged <= 5%, >= 90% of 2x and 20x steps, >= 80% of 1.2x steps
/// where the CV <= 5%, >= 90% of the steps found at their exact launch).
bool kinds_table(const std::vector<analysis::history::change_statistic>& methods,
                 std::int64_t count, std::int64_t n, std::uint64_t seed);

/// Prints the stated against the measured detectable steps of method `stat` (`count` series a
/// bisection step); false when one is more than 25% off.
bool detectable_table(analysis::history::change_statistic stat, std::int64_t count,
                      std::uint64_t seed);

/// Prints the small series' table (6 to 10 launches) and the smallest launches per alpha;
/// false when one of their goals is missed.
bool small_series(std::uint64_t seed);

} // namespace ringscale::bench::history_rates
