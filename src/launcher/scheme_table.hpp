// The table a launch of attention jobs closes with: which context-parallel scheme wins at
// each problem, rank count and length. The grouping and the ranking are the analysis'
// (analysis/cases/scheme_cells.hpp: what `ringscale-stats crossover` reports), so
// "which scheme wins" is computed in one place; this file only lays the rows out.
#pragma once

#include "src/base/case_record.hpp"

#include <string>
#include <vector>

namespace ringscale {

/// Whether the comparison uses `rec`: a ring_attention or context_parallel case.
bool compares_schemes(const results::case_record& rec);

/// The comparison over this launch's `records`: for each (problem shape, P, S), one row per
/// scheme, fastest first and marked, with median step time (slowest rank), GFLOP/s per rank,
/// communication share, bytes sent and peak memory per rank. "" when no context_parallel
/// case completed. Rank 0; pure.
std::string scheme_table(const std::vector<results::case_record>& records);

} // namespace ringscale
