// The crossover map at scale: for the attention problem of the calibration's cases (heads,
// kv heads, head dim, batch, mask, layout, pass) on a (P, S) grid up to P = 4096 and S = 10M,
// every scheme priced on a hardware profile: the fastest that fits in device memory, its
// margin over the runner-up, and which schemes do not fit. A table, and for the report a
// heatmap PNG drawn by gnuplot.
#pragma once

#include "analysis/presentation/table.hpp"
#include "target.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis::predict {

struct map_scheme {
    std::string name; ///< ring | allgather | ulysses | hybrid
    step_prediction p;
    bool fits = false;
};

struct map_cell {
    int p = 1;
    double s = 0;
    std::vector<map_scheme> schemes;
    int fastest = -1;        ///< index into schemes; -1: none runs and fits
    double margin = unknown; ///< t(runner-up) / t(fastest) - 1
};

struct crossover_map {
    std::string assumptions; ///< describe(profile)
    std::string plot_title;  ///< text we generate ourselves (never from a file)
    std::string shape;       ///< "B=1 H=8 Hkv=4 D=64 causal zigzag fwd+bwd bf16"
    std::vector<int> ps;
    std::vector<double> ss;
    std::vector<map_cell> cells; ///< S-major: cells[i_s * ps.size() + i_p]
    std::string refusal;         ///< non-empty: no map, and why
};

/// The map for the first attention case among `cases` (with `overrides` applied to its
/// shape: any --at field but P and S) on `hw`.
crossover_map build_map(const std::vector<target>& cases, const std::vector<at_field>& overrides,
                        const hardware_profile& hw);

/// The report's map: built from the attention cases of `pooled` (ring_attention,
/// context_parallel) on `hw`; empty when the study has none.
std::optional<crossover_map> report_map(const std::vector<pooled_case>& pooled,
                                        const hardware_profile& hw);

/// One row per S, one column per P: "fastest +margin%", markers of schemes that do not fit.
table map_table(const crossover_map& m);

/// The report's section: assumptions, the table and (with `plots`) the heatmap PNG.
std::string map_section(const crossover_map& m, const std::string& dir, bool plots,
                        std::vector<std::string>& pngs);

} // namespace ringscale::analysis::predict
