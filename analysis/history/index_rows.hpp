// The rows of the history index (index.hpp): written from the files by the checked reader,
// read back with every value checked, so a crafted index can never make a wrong series.
#pragma once

#include "file_summaries.hpp"
#include "index.hpp"

#include <string>

namespace ringscale::analysis::history {

/// Drop `path` from the index: its file row and, when its launch was read from it, the
/// launch, its cases and every other path holding that launch (read again as new).
void forget_file(database& db, const std::string& path);
/// Key the rows of file `from` by `to` (its real path); where `to` has rows already, `from`'s
/// are forgotten. Nothing is read again.
void rename_file(database& db, const std::string& from, const std::string& to);

/// What tells a file changed without opening it (index.cpp's cache key).
struct file_key {
    std::int64_t size, mtime_ns, inode, ctime_ns;
};

/// Why `path` and its summary hold something the index's reader refuses (load_rows' limits:
/// a control character in the name, a launch_id over 512 bytes, a /meta value over 4096, ...),
/// naming the field; "" when they fit. The indexer leaves such a file out with this line, so
/// one file costs only itself.
std::string beyond_limits(const std::string& path, const file_summary& summary);

/// Adds files to an index inside an open transaction.
class index_writer {
  public:
    explicit index_writer(database& db);
    /// Add `path`'s launch and case summaries as its reader sent them (file_summaries.hpp);
    /// a file that could not be read, or holds more than the index keeps (beyond_limits), is
    /// recorded with its problem. Returns a note ("" when none): a launch already indexed
    /// from another path is counted once.
    std::string add_file(const std::string& path, const file_key& key, const file_summary& summary);

  private:
    database& m_db;
    statement m_file, m_launch, m_case, m_owner;
};

/// Every launch and case of `db`, each value checked. Throws damaged_index on a row this
/// program would not write (a value out of range, a control character, a case whose launch
/// is not there).
index_contents load_rows(database& db);

} // namespace ringscale::analysis::history
