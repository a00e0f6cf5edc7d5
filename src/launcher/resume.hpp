// --resume: which of this launch's cases earlier launches into the same output directory
// already completed, so a sweep cut short (time limit, dead node) runs only the rest.
#pragma once

#include "src/launcher/case_identity.hpp"

#include <string>
#include <vector>

namespace ringscale {

/// For each key, where a case with that key and status ok already is ("name.h5:/cases/NNNN"),
/// or "" if nowhere. Reads the ringscale/2 files (*.h5, *.h5.part) directly in `dir`; a
/// file that cannot be read (or is ringscale/1, whose keys differ) is named on stderr and
/// ignored. Not collective.
std::vector<std::string> find_completed(const std::vector<std::string>& keys,
                                        const std::string& dir);

} // namespace ringscale
