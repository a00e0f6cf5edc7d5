// Which attention scheme wins where: for each (S, P) of a study, the fastest scheme
// (ring_attention's ring and context_parallel's allgather, ulysses, hybrid) with its margin
// over the runner-up (bootstrap CI of the ratio of medians) and memory per rank beside it;
// and, at fixed P, the sequence lengths where two schemes trade places.
#pragma once

#include "cases.hpp"
#include "table.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// One scheme's measurement at one (S, P).
struct scheme_point {
    std::string scheme; ///< "ring/zigzag", "ulysses", "hybrid u=2", ...
    const pooled_case* source = nullptr;
    double median_s = 0;
    double peak_bytes = 0; ///< the largest rank's peak (device on a GPU, else host buffers)
};

/// Every scheme measured at one (S, P) of one problem shape, fastest first.
struct crossover_cell {
    std::string shape; ///< the shared parameters (heads, head_dim, pass, ...)
    double seq_len = 0;
    int world_size = 0;
    std::vector<scheme_point> schemes;
    double margin = 0;    ///< t(runner-up) / t(fastest) - 1; 0 with one scheme
    double margin_lo = 0; ///< bootstrap CI of the margin
    double margin_hi = 0;
    std::size_t least_memory = 0; ///< index into schemes of the smallest peak
};

/// Where two schemes trade places along S at fixed P.
struct crossover_point {
    std::string shape;
    int world_size = 0;
    std::string faster_below;        ///< faster at s_below
    std::string faster_above;        ///< faster at s_above
    double s_below = 0, s_above = 0; ///< the bracketing grid points
    double boundary = 0; ///< where log(tA/tB) interpolated linearly in log S crosses zero
    /// Both orders hold with confidence: the bootstrap CI of the time ratio excludes 1 on the
    /// faster side at s_below and at s_above. Otherwise noise may have drawn the crossing.
    bool confirmed = false;
};

struct crossover_result {
    std::vector<crossover_cell> cells;
    std::vector<crossover_point> crossings;
};

/// Every (shape, P, S) measured with an attention scheme (ring_attention's ring,
/// context_parallel's allgather, ulysses, hybrid), ordered by shape, P and S; in each, the
/// schemes fastest first (median step time): which scheme wins where. No margins (one scheme
/// may be alone). The launcher's closing table and find_crossovers both start here.
std::vector<crossover_cell> scheme_cells(const std::vector<pooled_case>& pooled);

/// Cells with two or more schemes and every crossing between neighbouring S of a pair
/// measured at both. `replicates` bootstrap resamples for the margin CIs.
crossover_result find_crossovers(const std::vector<pooled_case>& pooled, std::size_t replicates,
                                 std::uint64_t seed, double level = 0.95);

table crossover_cell_table(const crossover_result& r);
table crossover_point_table(const crossover_result& r);

} // namespace ringscale::analysis
