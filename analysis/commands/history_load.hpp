// What `history` and `report --history` share: the index brought up to date with the results
// files and read back (rebuilt, with one line, when it holds rows no launch writes), the notes
// printed, and every series built and analysed.
#pragma once

#include "analysis/history/series.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// The index's contents and the series built on them (which refer into the contents).
struct history_data {
    history::index_contents contents;
    history::series_set set;
};

/// The default index of `inputs`: ringscale-history.sqlite in the first, which must be a
/// directory (config_error "WHO: ... give INDEX_OPTION FILE" otherwise).
std::string default_history_index(const std::vector<std::string>& inputs, const char* who,
                                  const char* index_option);

/// How long a run waits for another that holds the index's lock, by default: more than a
/// first index of 10,000 launches takes (137 s on a 2-core machine).
inline constexpr double default_index_wait_s = 600;

/// Update the index at `index` with the results files of `inputs`, load it and build the
/// series; every note goes to stderr. With `strict`, an unreadable input is an error (exit 2).
/// The index's lock is held while it is updated and read, waiting for it up to `wait_s`.
/// Files the index could not read are counted on one line per kind; `verbose` names each.
std::unique_ptr<history_data> read_history(const std::vector<std::string>& inputs,
                                           const std::string& index,
                                           const history::series_options& opt, bool strict,
                                           double wait_s = default_index_wait_s,
                                           bool verbose = false);

} // namespace ringscale::analysis
