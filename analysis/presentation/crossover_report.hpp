// The report's "Crossovers" section: the fastest-scheme and crossover tables with their
// verdicts (the plots of time against S with the crossings marked are question_plots.hpp's).
#pragma once

#include "analysis/comparisons/crossover.hpp"

#include <string>

namespace ringscale::analysis {

/// Markdown of the section (empty when no (S, P) has two schemes).
std::string crossover_section(const crossover_result& r);

} // namespace ringscale::analysis
