// The history index (issue 37): one summary per launch and per case of every results file
// read, in an SQLite database (Debian's libsqlite3) beside the results or where --index says.
// An update reads only files that are new or changed (path, size, mtime, inode, ctime: issue
// 50), forgets files that are gone, and reads a launch held under two paths once. An index that
// is damaged, from another version or holds rows no writer of this program would write is
// rebuilt from the files, with one line saying why; a file beyond the reader's limits is left
// out with one line (one file costs only itself). Every run holds the index's lock
// (index_lock.hpp). Values reach SQL only as bound parameters.
#pragma once

#include "index_lock.hpp"
#include "records.hpp"
#include "sqlite.hpp"

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ringscale::analysis::history {

/// What the index holds: every launch and every case summary, checked.
struct index_contents {
    std::vector<launch_record> launches;
    std::vector<launch_case> cases;
    std::vector<std::string> problems;      ///< files that could not be read: "skipping FILE: why"
    std::vector<std::string> problem_kinds; ///< the `why` of each of `problems`
};

/// What an update did.
struct update_counts {
    std::size_t read = 0;           ///< files read (new or changed)
    std::size_t unchanged = 0;      ///< files whose summaries were kept
    std::size_t removed = 0;        ///< files gone (or no longer among the inputs)
    std::size_t changed = 0;        ///< of `read`: files indexed before with another size or mtime
    std::size_t migrated = 0;       ///< rows keyed again by the real path of the file they hold
    std::vector<std::string> notes; ///< one line each: a launch under two paths, ...
};

class history_index {
  public:
    /// Take the index's lock (index_lock.hpp: waiting up to `wait_s` seconds, `say` printing
    /// the line that says so), then open `path`, creating it when absent or empty. A file
    /// that carries the index's application_id but is damaged or of another version is
    /// rebuilt (a new one written beside it and renamed in), with one line in `notes`. Any
    /// other non-empty file, another program's SQLite database included, is refused
    /// (config_error) and left untouched. The lock is held until destruction.
    history_index(const std::string& path, std::vector<std::string>& notes, double wait_s = 600,
                  const std::function<void(const std::string&)>& say = {});

    /// Bring the index to `files` (sorted, expanded inputs), each keyed by its real path (so
    /// `../h` and `s/h` are one directory): read the new and changed ones
    /// with the checked reader (each in a disposable child, a few at once:
    /// file_summaries.hpp), drop the rows of files gone. One transaction.
    update_counts update(const std::vector<std::string>& files);

    /// Everything it holds. Throws damaged_index when a row is not one this program writes.
    index_contents load() const;

    /// Empty the index (a fresh schema), as after a damage.
    void clear();

  private:
    /// Write a fresh index beside the old one and rename it in (under the lock).
    void rebuild();
    /// Read `paths` (new or changed) and add their rows, inside update's transaction; each
    /// file's read limit scales with `read_limit_s` (read_cpu_limit_s).
    void add_files(const std::vector<std::string>& paths, double read_limit_s,
                   update_counts& counts);

    std::string m_path;
    index_lock m_lock; ///< taken first, released last: after m_db is closed
    std::unique_ptr<database> m_db;
};

/// A row of the index that no writer of this program would write (a crafted or damaged
/// index); the caller clears the index and reads the files again.
struct damaged_index : std::runtime_error {
    using std::runtime_error::runtime_error;
};

} // namespace ringscale::analysis::history
