// Reading a damaged file in a disposable copy of the process. HDF5 1.10 can crash (SIGSEGV
// inside its attribute iteration) on a byte-flipped file, and nothing the caller does around
// the C call can catch that; a forked child that reads the file first can. The child runs
// with a memory and time cap, so a file whose declared sizes would exhaust the machine is
// caught the same way.
#pragma once

#include "src/base/child_limits.hpp"

#include <functional>
#include <string>

namespace ringscale::analysis {

/// Limits for one probe (src/base/child_limits.hpp).
using probe_limits = child_limits;

/// Run `read` in a forked child under `limits`. Returns "" when reading in this process is
/// safe (it returned or threw an ordinary error, which an in-process read reports the usual
/// way), else one line saying why not: "needs more than N GiB of memory", "took longer than
/// N s", or the signal that killed it. Not thread-safe (fork).
std::string probe_in_child(const std::function<void()>& read, const probe_limits& limits = {});

} // namespace ringscale::analysis
