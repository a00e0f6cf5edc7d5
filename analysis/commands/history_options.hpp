// The options of a history's series, declared once for `history` and `report --history`
// (report --history takes the same options as history). `report` has its own
// --seed and --format, so there each option carries the prefix "history-".
#pragma once

#include "analysis/history/series.hpp"

#include <boost/program_options.hpp>
#include <string>

namespace ringscale::analysis {

/// Declare --order, --commits, --env, --alpha, --min-segment, --min-effect, --permutations,
/// --seed, --skip-marked and --keep-marked (each as PREFIX + name) into `d`, bound to `opt`.
void declare_series_options(boost::program_options::options_description& d,
                            history::series_options& opt, const std::string& prefix);

/// The checks that need every option (ranges, --commits needs --order label:KEY) and the
/// --commits file read; a note when --keep-marked was given (it is the default).
void finish_series_options(const boost::program_options::variables_map& vm,
                           history::series_options& opt, const std::string& prefix);

} // namespace ringscale::analysis
