// Command line of ringscale-stats (the only file that includes Boost.Program_options): a
// subcommand, its inputs and options, yielded as a plain struct.
#pragma once

#include "analysis/measures/sanity.hpp"
#include "analysis/presentation/table.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis {

struct cli_options {
    std::string command; ///< summary | scaling | model | crossover | compare | export | report |
                         ///< profile | predict
    std::vector<std::string> inputs;
    std::string base_input; ///< compare BASE
    std::string new_input;  ///< compare NEW
    std::string out_dir;    ///< report DIR
    output_format format = output_format::text;
    bool strict = false;
    bool remove_outliers = false;
    sanity_limits limits;
    double level = 0.95;
    std::optional<int> base_p;
    std::size_t bootstrap = 2000;
    std::uint64_t seed = 1;
    std::vector<double> predict;
    /// --predict p=64,S=1M[;p=..,S=..]: points (P, S) for the two-parameter models
    std::vector<std::pair<double, double>> predict_ps;
    double threshold = 0.05; ///< fraction
    double alpha = 0.05;
    std::size_t min_launches = 2;
    double tie_floor = 0.01; ///< crossover: least noise floor between cases (fraction)
    std::string csv_path;
    std::string json_path;
    std::size_t max_heatmaps = 6;
    bool pool_resources = false; ///< pool launches run with different threads / affinity
    std::string family_plots;    ///< report: families (label substring, or "all") to plot alone
    std::string at;              ///< predict --at 'field=value,...'
    std::vector<std::string> validate_inputs; ///< predict --validate HELDOUT...
    std::string hardware;                     ///< predict, report --hardware h100|FILE
    bool map = false;                         ///< predict --map
    std::string help_text;                    ///< non-empty: print it and exit 0
};

/// Parse argv. Throws config_error on bad input (unknown subcommand or option, bad value).
cli_options parse_cli(int argc, const char* const* argv);

/// Text of `ringscale-stats --help`.
std::string tool_help();

} // namespace ringscale::analysis
