// Which launch wrote a results file, and whether the file being written is still ours:
// the per-launch id written at creation (root attribute launch_id), and the identity of the
// `.part` file (device and inode) checked before each case is appended and before the file
// is published, so a `.part` replaced during a sweep is never published as the results.
#pragma once

#include <string>
#include <sys/types.h>

namespace ringscale {

/// 32 hex digits drawn from the system's random source: with created_utc and git_commit,
/// what tells one launch from another when the same file is seen twice. Not collective.
std::string new_launch_id();

/// A file's identity on its filesystem.
struct file_identity {
    dev_t device = 0;
    ino_t inode = 0;
};

/// The identity of the file at `path`; throws io error when it cannot be stat'ed.
file_identity identify_file(const std::string& path);

/// Why `path` is no longer the file `expected` (gone, or replaced by another file), or ""
/// when it still is.
std::string file_replaced(const std::string& path, const file_identity& expected);

} // namespace ringscale
