// Which attention scheme wins where: for each (S, P) of a study, the fastest scheme
// (ring_attention's ring and context_parallel's allgather, ulysses, hybrid) with its margin
// over the runner-up (bootstrap CI of the ratio of medians) and memory per rank beside it;
// and, at fixed P, the sequence lengths where two schemes trade places.
#pragma once

#include "analysis/cases/scheme_cells.hpp"
#include "analysis/presentation/table.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// Where two schemes trade places along S at fixed P.
struct crossover_point {
    std::string shape;
    int world_size = 0;
    std::string faster_below;        ///< faster at s_below
    std::string faster_above;        ///< faster at s_above
    double s_below = 0, s_above = 0; ///< the bracketing grid points
    double boundary = 0; ///< where log(tA/tB) interpolated linearly in log S crosses zero
    /// Both orders hold by the one decision rule (analysis/statistics/decision.hpp, the noise
    /// floor its threshold): at s_below and at s_above the CI of t(slower) / t(faster),
    /// resampling launches then iterations, lies above 1 + the floor, both schemes were
    /// launched at least twice, and no mark could account for the margin. Otherwise noise (or
    /// the machine) may have drawn the crossing.
    bool confirmed = false;
    /// "confirmed", or the first end's "tie" or "not decided (one launch / within noise /
    /// marked: ...)".
    std::string verdict;
    /// CI of t(slower) / t(faster) at each end (slower: the scheme that loses there).
    double ratio_below_lo = 0, ratio_below_hi = 0, ratio_above_lo = 0, ratio_above_hi = 0;
};

/// How far apart two cases must be to be told apart.
struct noise_floor {
    double fraction = 0.01; ///< a ratio must clear 1 + fraction
    std::string source;     ///< where the number came from
};

struct crossover_result {
    std::vector<crossover_cell> cells;
    std::vector<crossover_point> crossings;
    noise_floor floor;
};

/// Settings of find_crossovers.
struct crossover_options {
    std::size_t replicates = 2000;
    std::uint64_t seed = 1;
    double level = 0.95;
    std::size_t min_launches = 2; ///< launches per scheme below which nothing is confirmed
    double min_floor = 0.01;      ///< the noise floor's least value
};

/// The noise between cases: at P=1, schemes of the same `work` (layouts of one algorithm)
/// compute the same thing, so their time ratio is noise; the median over such groups of
/// slowest / fastest - 1, never below `min_floor`.
noise_floor between_case_noise(const std::vector<crossover_cell>& cells, double min_floor);

/// Cells with two or more schemes and every crossing between neighbouring S of a pair
/// measured at both, except at P=1 (identical work). Margins and ratios have two-level
/// bootstrap CIs (launches, then iterations) where both schemes have `min_launches` launches.
crossover_result find_crossovers(const std::vector<pooled_case>& pooled,
                                 const crossover_options& opt);

table crossover_cell_table(const crossover_result& r);
table crossover_point_table(const crossover_result& r);

} // namespace ringscale::analysis
