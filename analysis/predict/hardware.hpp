// Hardware profiles for what-if predictions: a device's peak rate and the two link levels,
// stated instead of calibrated. One is built in (`h100`: H100 SXM, NVLink 4 inside a node of
// 8, 400 Gb/s InfiniBand NDR per GPU (8 NICs a node) between nodes, from public
// specifications); others are
// files of `key = value` lines (profile_text() writes one). Every figure is an assumption and
// the output names the profile.
#pragma once

#include "cost.hpp"

#include <string>

namespace ringscale::analysis::predict {

struct hardware_profile {
    std::string name;            ///< shown with every prediction made on it
    std::string source;          ///< "built-in" or the file's path
    std::string device = "cuda"; ///< cpu | cuda: what the jobs run on
    std::string dtype = "bf16";  ///< attention inputs on this device
    double peak_tflops = 0;      ///< dense peak for dtype, TFLOP/s per device
    double efficiency = 0;       ///< share of peak large attention and GEMM blocks reach
    double memory_gbs = 0;       ///< device memory bandwidth, GB/s (memory-bound work)
    double call_overhead_us = 0; ///< per kernel call
    double device_memory_gib = 0;
    double ranks_per_node = 0;
    /// Links from a node to the others (NICs) its ranks share (links.hpp); optional in a file,
    /// where it defaults to ranks_per_node (one per rank, nothing shared).
    double nics_per_node = 0;
    double intra_alpha_us = 0, intra_busbw_gbs = 0; ///< per algorithm step; nccl-tests busbw
    double inter_alpha_us = 0, inter_busbw_gbs = 0;
};

/// The built-in H100 + NVLink + 400 Gb/s InfiniBand profile.
hardware_profile builtin_h100();

/// "h100" for the built-in profile, else a profile file. config_error (one line) for an
/// unreadable file, an unknown key, a missing figure or a figure that is not a positive
/// number.
hardware_profile load_hardware(const std::string& name_or_path);

/// Parse a profile's text (`source` names it in errors).
hardware_profile parse_hardware(const std::string& text, const std::string& source);

/// The profile as a file (every key, with units in comments).
std::string profile_text(const hardware_profile& h);

/// Compute and link figures the profile states.
figures profile_figures(const hardware_profile& h);

/// One line naming the profile and its figures, for the output's assumptions.
std::string describe(const hardware_profile& h);

} // namespace ringscale::analysis::predict
