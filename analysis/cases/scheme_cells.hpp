// The attention schemes of a study side by side: for each problem shape, P and S, every scheme
// measured there (ring_attention's ring, context_parallel's allgather, ulysses, hybrid), fastest
// first. `ringscale-stats crossover` (comparisons/crossover.hpp) and the launcher's closing
// table (src/launcher/scheme_table.*) both start here, so "which scheme wins" is one function.
#pragma once

#include "cases.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// One scheme's measurement at one (S, P).
struct scheme_point {
    std::string scheme; ///< "ring/zigzag", "ulysses", "hybrid u=2", ...
    const pooled_case* source = nullptr;
    double median_s = 0;
    double peak_bytes = 0; ///< the largest rank's peak (device on a GPU, else host buffers)
    /// The algorithm without its layout ("ring_attention|ring", "context_parallel|ulysses"):
    /// at P=1 two schemes with the same `work` compute exactly the same thing.
    std::string work;
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
    /// At P=1 every scheme and layout computes the same single-rank attention: identical
    /// work, whose time differences are noise. Such a cell is never ranked.
    bool same_work = false;
    /// The one decision rule's verdict on the fastest against the runner-up: "confirmed" (the
    /// margin's CI, over launches, clears the noise floor and no mark could account for it),
    /// "tie", "not decided (one launch / within noise / marked: ...)" or "same work (P=1)".
    std::string verdict;
};

/// The scheme a case measures, as the tables name it: its variant with what sets it apart
/// ("ring overlap=off", "hybrid u=2 across", "ulysses layout=contiguous").
std::string scheme_name(const pooled_case& c);

/// Every (shape, P, S) measured with an attention scheme (ring_attention's ring,
/// context_parallel's allgather, ulysses, hybrid), ordered by shape, P and S; in each, the
/// schemes fastest first (median step time): which scheme wins where. No margins (one scheme
/// may be alone). The launcher's closing table and find_crossovers both start here.
std::vector<crossover_cell> scheme_cells(const std::vector<pooled_case>& pooled);

} // namespace ringscale::analysis
