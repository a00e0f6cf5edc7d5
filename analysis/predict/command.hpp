// `ringscale-stats predict CALIB... [--at F=V,...] [--validate HELDOUT...] [--hardware P]
// [--map]`: calibrate the cost model on CALIB, then predict the calibration cases (how well it
// fits), the --at targets, the held-out cases (last line: median |error| and band coverage),
// or the crossover map at scale.
#pragma once

#include "analysis/commands/cli.hpp"

#include <ostream>

namespace ringscale::analysis::predict {

/// Run the predict command; throws ringscale::error for exit 2. Returns 0.
int run_predict(const cli_options& o, std::ostream& out);

} // namespace ringscale::analysis::predict
