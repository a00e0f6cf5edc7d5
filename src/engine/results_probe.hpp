// --resume reads earlier launches' results files in the launcher, and a file damaged enough
// can crash or hang HDF5 itself. Each prior file is read first in a child: this
// same executable started with posix_spawn (vfork-like, exec at once: safe inside an MPI
// process, where fork() is not with some transports) in a hidden mode that main() handles
// before MPI_Init, under an address-space and time cap (src/base/child_limits.hpp).
#pragma once

#include "src/base/child_limits.hpp"

#include <string>

namespace ringscale {

/// The hidden command-line flag: `ringscale --probe-results FILE`.
inline constexpr const char* probe_results_flag = "--probe-results";

/// The child's side, called by main() before MPI_Init: read `path` the way --resume does
/// under `limits`. Exits 0 when the read ended normally (an ordinary error included: reading
/// in-process reports it the usual way), 3 when it ran out of memory; a crash or hang ends it
/// with a signal.
int probe_results_main(const char* path, const child_limits& limits = {});

/// The parent's side: run `exe --probe-results path` and wait. Returns "" when reading `path`
/// in this process is safe (or the probe could not be started), else one line saying why not
/// (the child's signal, time-out or memory). `exe` must be a ringscale launcher; the default
/// is this executable. Not collective; blocks for at most about `limits.seconds`.
std::string probe_results_file(const std::string& path, const std::string& exe = "/proc/self/exe",
                               const child_limits& limits = {});

} // namespace ringscale
