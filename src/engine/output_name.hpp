// Names of results files that two launches can never share: the writer reserves
// `<name>.h5.part` with an exclusive create (trying `<name>_1.h5`, `_2` ... when taken) and
// publishes it with a rename that never replaces an existing file. Two launches with the same
// SLURM_JOB_ID in the same second and directory each keep their own file.
#pragma once

#include "src/base/h5.hpp"

#include <string>
#include <utility>

namespace ringscale {

/// `text` reduced to letters, digits, '-' and '_' (others become '_'), at most 64 characters:
/// an environment value such as SLURM_JOB_ID="../../x" cannot leave the output directory.
std::string file_name_token(const std::string& text);

/// The i-th candidate for `path` (".../name.h5"): i = 0 is `path`, then ".../name_<i>.h5".
std::string numbered_path(const std::string& path, int i);

/// Create `<final>.part` exclusively for a free `final` (`path`, or a numbered variant unless
/// `fixed_name`) and return the final path with the open file. Throws io/hdf5 errors naming
/// the path; with `fixed_name` an existing `path` or `path.part` is an error.
std::pair<std::string, h5::file> reserve_results_file(const std::string& path, bool fixed_name);

/// Rename `temp` to `final` without replacing a file that appeared there meanwhile (it then
/// takes the next free numbered name). Returns the path the file has now.
std::string publish_results_file(const std::string& temp, const std::string& final);

} // namespace ringscale
