// The history index's lock protocol (issue 50): every run that may write the index holds an
// exclusive flock(2) on INDEX.lock, beside it, from before it opens the index until it has
// closed it, so no process ever has the index open while another rebuilds (renames) it. A run
// that finds the lock held says once who holds it (the holder writes "pid P on HOST since
// TIME" into the lock file) and waits up to a stated time. The index, its journal and its
// lock are refused when they are symbolic links (a link planted in a shared directory would
// make a root cron job write where the link points); in a group-writable directory they are
// made group-writable; on a network filesystem, where SQLite's locking is not to be trusted,
// a note suggests --index on local disk.
#pragma once

#include <functional>
#include <string>

namespace ringscale::analysis::history {

/// The exclusive lock of one index, held from construction to destruction (move-only).
class index_lock {
  public:
    /// Take the lock of `index` (INDEX.lock), waiting up to `wait_s` seconds; `say` prints a
    /// line at once when it starts to wait, and when the index lies on a network filesystem.
    /// Throws config_error (exit 2) on a symlink, a directory that cannot be written (naming
    /// where the index lives and --index) or a lock still held after `wait_s`.
    index_lock(const std::string& index, double wait_s,
               const std::function<void(const std::string&)>& say);
    ~index_lock();
    index_lock(const index_lock&) = delete;
    index_lock& operator=(const index_lock&) = delete;

  private:
    int m_fd = -1;
};

/// Throw config_error when `path` is a symbolic link (`what`: "index", "journal", ...).
void refuse_symlink(const std::string& path, const char* what);

/// Make `path` group-writable when its directory is (a shared results directory); quiet when
/// it cannot (not the owner).
void share_with_group(const std::string& path);

/// "NFS", "Lustre", ... when `dir` lies on a network filesystem, else "".
std::string network_filesystem(const std::string& dir);

} // namespace ringscale::analysis::history
