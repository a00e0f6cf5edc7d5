// `ringscale-stats predict CALIB... [--at F=V,...] [--validate HELDOUT...] [--hardware P]
// [--map]`: calibrate the cost model on CALIB, then predict the calibration cases (how well it
// fits), the --at targets, the held-out cases (last line: median |error| and band coverage),
// or the crossover map at scale.
#pragma once

#include "analysis/commands/shared.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ringscale::analysis::predict {

/// The options of `predict` (declared in predict.cpp, its subcommand file).
struct predict_options : common_options {
    std::size_t bootstrap = 2000;
    std::uint64_t seed = 1;
    std::string at;                           ///< --at 'field=value,...'
    std::vector<std::string> validate_inputs; ///< --validate HELDOUT...
    std::string hardware;                     ///< --hardware h100|FILE
    bool map = false;                         ///< --map
    /// --skip-marked: leave launches marked contended or drifted out of the calibration; by
    /// default they stay and their estimated effect widens the bands. --keep-marked is accepted
    /// with a note.
    bool skip_marked = false;
};

/// Run the predict command; throws ringscale::error for exit 2. Returns 0.
int run_predict(const predict_options& o, std::ostream& out);

} // namespace ringscale::analysis::predict
