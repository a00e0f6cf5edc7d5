// The subcommands of ringscale-stats: load inputs, analyse, print or write the results.
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/presentation/views.hpp"
#include "cli.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// Run one parsed command, printing tables to `out` and problems to stderr. Returns the exit
/// status (0 ok, 1 regression found by compare); throws ringscale::error for exit 2.
int run_command(const cli_options& o, std::ostream& out);

/// Fit a model to every family with at least 3 distinct P; the others are named in
/// `refusals` with the reason. Predictions at `o.predict` with a bootstrap band.
std::vector<family_model> fit_family_models(const std::vector<family>& families,
                                            const cli_options& o,
                                            std::vector<std::string>& refusals);

} // namespace ringscale::analysis
