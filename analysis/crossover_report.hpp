// The report's "Crossovers" section: the fastest-scheme and crossover tables and, with
// gnuplot, one plot per problem shape and P of median time against S, one line per scheme,
// with the confirmed boundaries marked.
#pragma once

#include "crossover.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// Markdown of the section (empty when no (S, P) has two schemes); plots go to `dir` (at
/// most `max_plots`) and their PNG names are appended to `pngs`.
std::string crossover_section(const crossover_result& r, const std::string& dir, bool plots,
                              std::size_t max_plots, std::vector<std::string>& pngs);

} // namespace ringscale::analysis
