// Reading a small text file the user names (a job file) without trusting what the path is:
// a FIFO must not block the launch, a device or /proc file must not feed it endless or
// failing reads, and a huge file must not exhaust memory.
#pragma once

#include <cstdint>
#include <string>

namespace ringscale {

/// The job file's size limit: presets are a few hundred bytes.
inline constexpr std::uint64_t max_job_file_bytes = std::uint64_t{1} << 20;

/// The whole text of the regular file `path`, at most `max_bytes`. Throws config_error with
/// one line naming `what` and `path` when it cannot be opened, is not a regular file (a
/// directory, FIFO, device or socket), is larger than `max_bytes`, or a read fails (e.g.
/// /proc/self/mem). Opening never blocks. Not collective.
std::string read_text_file(const std::string& path, std::uint64_t max_bytes,
                           const std::string& what);

} // namespace ringscale
