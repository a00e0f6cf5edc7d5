// The launcher's own options (every job shares them: --iters, --device, --output ...), each
// declared once like a job's (src/engine/options.hpp), and the launch_config they fill.
#pragma once

#include "src/engine/config.hpp"
#include "src/engine/options.hpp"

#include <map>
#include <string>
#include <vector>

namespace ringscale {

/// The declarations, in --help order.
const std::vector<jobs::option_decl>& launch_options();

/// Fill `cfg`'s launcher settings from `texts` (option name -> the text given or defaulted):
/// every value parsed and checked against its declaration, then the rules that tie options
/// together (--attn-kernel needs cuda, --resume needs a directory). config_error, one line.
void read_launch_options(const std::map<std::string, std::string>& texts, launch_config& cfg);

} // namespace ringscale
