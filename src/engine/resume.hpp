// --resume: which of this launch's cases earlier launches into the same output directory
// already completed, so a sweep cut short (time limit, dead node) runs only the rest.
#pragma once

#include "src/engine/case_identity.hpp"

#include <map>
#include <string>
#include <vector>

namespace ringscale {

/// For each key, where a case with that key and status ok already is ("name.h5:/cases/NNNN"),
/// or "" if nowhere. Reads the ringscale/2 files (*.h5, *.h5.part) directly in `dir`; a
/// file that cannot be read (or is ringscale/1, whose keys differ) is named on stderr and
/// ignored; each file is read first in a child (results_probe.hpp), so one that crashes or
/// hangs HDF5 is named the same way ("prior file unreadable") and its cases run again. Not
/// collective.
std::vector<std::string> find_completed(const std::vector<std::string>& keys,
                                        const std::string& dir);

/// The completed (status ok, timings sound) cases of one results file, read in this process:
/// case_key -> "name.h5:/cases/NNNN". Throws when the file is not a readable ringscale/2 file;
/// names a case with unreadable timings on stderr.
std::map<std::string, std::string> read_completed_cases(const std::string& path);

} // namespace ringscale
