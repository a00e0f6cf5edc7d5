// Reading ringscale/2 (and ringscale/1) HDF5 files with the project's RAII wrapper: one pass per
// case, whole datasets at a time. Inputs may be files, directories (searched recursively for *.h5
// and
// *.h5.part) or glob patterns; a bad file is reported in one line and skipped.
#pragma once

#include "analysis/cases/results.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// Read every case of one results file. Throws ringscale::error (kind hdf5 or config) with a
/// reason (not the path) when the file is not a readable ringscale/2 or ringscale/1 file;
/// unreadable case groups of an incomplete file are dropped and named in `warnings`.
std::vector<case_data> read_results_file(const std::string& path,
                                         std::vector<std::string>* warnings = nullptr);

/// Expand inputs into a sorted, de-duplicated list of file paths. A pattern or directory
/// that matches nothing is reported in `problems`.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs,
                                       std::vector<std::string>& problems);

/// Everything read from a set of inputs.
struct result_set {
    std::vector<case_data> cases;
    std::vector<std::string> files;    ///< files read successfully
    std::vector<std::string> problems; ///< one line each: "skipping FILE: reason"
    std::vector<std::string> notes;    ///< one line each: a file that repeats a launch
};

/// One line when `cases` come from both ringscale/1 and ringscale/2 files, else "".
std::string mixed_schema_note(const std::vector<case_data>& cases);

/// Read all inputs; a file holding a launch already read (a link, another path, a copy:
/// analysis/reading/launches.hpp) is read once, with a note. Each problem is also printed to stderr
/// as "ringscale-stats: <problem>" (notes as "ringscale-stats: note: <note>");
/// with `strict` the first one throws config_error instead, and so does the first problem
/// when no input yielded any case.
result_set load_results(const std::vector<std::string>& inputs, bool strict);

} // namespace ringscale::analysis
