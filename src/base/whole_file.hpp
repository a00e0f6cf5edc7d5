// Output files that are whole or absent: a file is written under a temporary name
// in its own directory, checked on close and renamed into place, so a full disk, a file-size
// limit or an error half way leaves nothing partial behind; the rename replaces whatever
// name was there (a symlink included) and never writes through it. A set of files that
// belong together (a report and its plots) is written into a staging directory and moved
// into place only when every one of them was written. Not collective; no MPI.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace ringscale {

/// Write `path` from `body`: into a new temporary file beside it (".<name>.XXXXXX", created
/// exclusively, mode 0666 less the umask), flushed and closed with every error checked, then
/// renamed over `path`. On any failure the temporary file is removed and an io error names
/// `path` and the reason ("No space left on device", "File too large"); `path` keeps what it
/// held before. A symlink at `path` is replaced by the file, its target left untouched.
/// SIGXFSZ is ignored from the first call on, so a file-size limit is an error, not a kill.
void write_whole_file(const std::string& path, const std::function<void(std::ostream&)>& body);

/// Files that appear in `dir` together or not at all: a fresh staging directory inside
/// `dir` (".ringscale-staging.XXXXXX", mode 0700) to write them into; publish() renames each
/// regular file of it into `dir` (the one named `last` last, so that file's presence means
/// the others are there) and removes the staging directory. Without publish(), the
/// destructor removes the staging directory and everything in it.
class staged_files {
  public:
    /// io error when `dir` is not a writable directory.
    explicit staged_files(const std::string& dir);
    ~staged_files();
    staged_files(const staged_files&) = delete;
    staged_files& operator=(const staged_files&) = delete;

    /// The staging directory: write the files here.
    const std::string& path() const { return m_stage; }
    /// Move every regular file of the staging directory into the target directory. Returns
    /// their names, sorted, `last` at the end. io error, before any move, when a destination
    /// is a directory; when a later rename fails, the files moved are taken back and the ones
    /// they replaced restored, so the target directory is as it was, then io error.
    std::vector<std::string> publish(const std::string& last);

  private:
    std::string m_dir, m_stage;
};

} // namespace ringscale
