// Command line and job files (INI) -> launch_config. The only user of Boost.Program_options.
#pragma once

#include "src/engine/config.hpp"

#include <optional>
#include <string>

namespace ringscale {

/// What the command line asked for.
struct cli_result {
    std::optional<launch_config> config; ///< empty when only help/version/list was asked
    std::string message;                 ///< text to print on stdout (help, version, job list)
};

/// Parse argv (and the job file it names). Throws config_error with one clear line on bad
/// input. Not collective; every rank parses the same arguments.
cli_result parse_cli(int argc, const char* const* argv);

} // namespace ringscale
