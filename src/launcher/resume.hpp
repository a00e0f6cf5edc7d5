// --resume: which of this launch's cases earlier launches into the same output directory
// already completed, so a sweep cut short (time limit, dead node) runs only the rest.
#pragma once

#include "src/launcher/config.hpp"
#include "src/launcher/run_loop.hpp"

#include <string>
#include <vector>

namespace ringscale {

/// Stable identity of a case across launches (16 hex digits): job, variant, resolved
/// parameters, world size, warm-up and timed iterations, device, comm and seed. Pure.
std::string case_key(const planned_case& pc, const launch_config& cfg, int world_size);

/// For each key, where a case with that key and status ok already is ("name.h5:/cases/NNNN"),
/// or "" if nowhere. Reads the ringscale/1 files (*.h5, *.h5.part) directly in `dir`; a
/// file that cannot be read is named on stderr and ignored. Not collective.
std::vector<std::string> find_completed(const std::vector<std::string>& keys,
                                        const std::string& dir);

} // namespace ringscale
