// The history index's reader (issue 37): each results file is read once, in a disposable
// forked child under the probe's memory and time cap (analysis/reading/file_probe.hpp says
// why: HDF5 1.10 can crash or exhaust memory on a damaged file). The child summarises the
// launch and its cases and sends the summary back over a pipe; the parent never opens the
// file. A few children run at once, each reading a batch of up to 16 files, each file under
// its own time cap and followed by closing HDF5; a summary is trusted only when sent after
// that close. The files a child of several did not answer for (it crashed on one) are read
// again one a child, so a damaged file gets its own child and its own reason.
#pragma once

#include "read_limit.hpp"
#include "records.hpp"

#include "src/base/child_limits.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis::history {

/// What one file gave: its launch and case summaries, or why it could not be read.
struct file_summary {
    std::string problem;                 ///< "" when read; else one line (no path)
    std::optional<launch_record> launch; ///< absent with a problem or when it holds no case
    std::vector<launch_case> cases;
    /// The read ran out of time (a busy machine, not a damaged file): the problem holds for
    /// this run only, and the file is read again on the next (index_writer::add_file).
    bool retry = false;
};

/// Read `paths` in capped children, at most `workers` at once (at least 1), each file under
/// read_cpu_limit_s(path, base_s). The summaries come back in the order of `paths`. Throws
/// error (io) only when no child can be started at all. Not thread-safe (fork).
std::vector<file_summary> read_summaries(const std::vector<std::string>& paths, unsigned workers,
                                         const child_limits& limits = {},
                                         double base_s = default_read_limit_s);

/// The number of reader children to run at once on this machine: its cores, 1 to 4.
unsigned default_readers();

/// The bytes a child sends for `s`, and `s` back from them (nullopt when they are not a
/// whole summary). Exposed for the tests.
std::string encode_summary(const file_summary& s);
std::optional<file_summary> decode_summary(const std::string& bytes);

} // namespace ringscale::analysis::history
