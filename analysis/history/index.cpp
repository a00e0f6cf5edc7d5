#include "index.hpp"

#include "file_summaries.hpp"
#include "index_rows.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <set>
#include <sys/stat.h>

namespace ringscale::analysis::history {

namespace {

namespace fs = std::filesystem;

/// 'RSHI': the index's application_id; user_version is its format.
constexpr std::int64_t application_id = 0x52534849;
constexpr std::int64_t format_version = 3;

// Created beside the index in one transaction and renamed in (rebuild()), so the index is
// always either the old file or a whole new one that carries the application_id.
constexpr const char* schema_sql = R"(
BEGIN;
CREATE TABLE files(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                   inode INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
                   launch TEXT NOT NULL, problem TEXT NOT NULL);
CREATE TABLE launches(launch TEXT PRIMARY KEY, path TEXT NOT NULL, created_utc TEXT NOT NULL,
                      time_s INTEGER NOT NULL, git_commit TEXT NOT NULL,
                      complete INTEGER NOT NULL, meta TEXT NOT NULL);
CREATE TABLE cases(launch TEXT NOT NULL, case_key TEXT NOT NULL, label TEXT NOT NULL,
                   iterations INTEGER NOT NULL, step_s REAL NOT NULL, compute_s REAL,
                   comm_s REAL, wait_s REAL, memory_bytes REAL, machine TEXT NOT NULL,
                   compute_cpu_s REAL, PRIMARY KEY(launch, case_key)) WITHOUT ROWID;
PRAGMA application_id = 1381189705;
PRAGMA user_version = 3;
COMMIT;
)";

/// Whether `path` is ours to rebuild: absent, empty, or an SQLite file that carries the
/// index's application_id (header bytes 68..71, big-endian), damaged or not. Any other file,
/// another program's SQLite database included (a typo in --index), is refused untouched.
/// Returns true when there is nothing to open yet (absent or empty).
bool check_ownership(const std::string& path) {
    std::error_code ec;
    const auto st = fs::symlink_status(path, ec);
    if (ec || st.type() == fs::file_type::not_found)
        return true;
    if (st.type() != fs::file_type::regular)
        throw config_error(fmt::format("index '{}' is not a regular file", terminal_text(path)));
    unsigned char head[72] = {};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(head), sizeof head);
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0)
        return true;
    if (got < 16 || std::memcmp(head, "SQLite format 3\0", 16) != 0)
        throw config_error(fmt::format("index '{}' is not an SQLite file: not overwritten "
                                       "(delete it, or name another with --index FILE)",
                                       terminal_text(path)));
    std::int64_t app = -1;
    if (got == sizeof head)
        app = (std::int64_t{head[68]} << 24) | (head[69] << 16) | (head[70] << 8) | head[71];
    if (app != application_id)
        throw config_error(fmt::format("index '{}' is an SQLite file of another program: not "
                                       "overwritten (name another with --index FILE)",
                                       terminal_text(path)));
    return false;
}

/// Why the open database is not this version's index, or "" when it is.
std::string schema_problem(database& db) {
    const std::int64_t version = db.pragma_int("user_version");
    if (db.pragma_int("application_id") != application_id)
        return "is not a ringscale history index";
    if (version != format_version)
        return fmt::format("is from another version (format {}, this one reads {})", version,
                           format_version);
    statement check = db.prepare("PRAGMA quick_check");
    if (!check.step() || check.text(0) != "ok")
        return "is damaged (" + terminal_text(check.text(0)).substr(0, 120) + ")";
    for (const char* probe :
         {"SELECT path, size, mtime_ns, inode, ctime_ns, launch, problem FROM files LIMIT 0",
          "SELECT launch, path, created_utc, time_s, git_commit, complete, "
          "meta FROM launches LIMIT 0",
          "SELECT launch, case_key, label, iterations, step_s, compute_s, "
          "comm_s, wait_s, memory_bytes, machine, compute_cpu_s FROM cases LIMIT 0"})
        db.prepare(probe); // throws when a table or column is missing
    return "";
}

/// What tells a file changed without opening it: a replacement of the same size and mtime
/// (cp -p, rsync -t) still has another inode or a newer ctime, which no user can set.
struct file_stamp {
    std::int64_t size = -1;
    std::int64_t mtime_ns = -1;
    std::int64_t inode = -1;
    std::int64_t ctime_ns = -1;
    bool operator==(const file_stamp& o) const {
        return size == o.size && mtime_ns == o.mtime_ns && inode == o.inode &&
               ctime_ns == o.ctime_ns;
    }
};

file_stamp stamp_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return {};
    return {static_cast<std::int64_t>(st.st_size),
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
            static_cast<std::int64_t>(st.st_ino),
            static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

/// `path` with every symbolic link, "." and ".." resolved (as given where it does not resolve).
std::string real_path(const std::string& path) {
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    return ec ? path : real.string();
}

/// An index written before rows were keyed by real paths: each row whose path (resolved from
/// here) or whose file (same inode, size and times) is a wanted file under another name is
/// keyed by that name, once; `known` follows. Returns how many rows moved.
std::size_t migrate_to_real_paths(database& db, std::map<std::string, file_stamp>& known,
                                  const std::set<std::string>& wanted) {
    std::map<std::int64_t, std::string> by_inode;
    for (const std::string& path : wanted)
        if (!known.count(path))
            by_inode.emplace(stamp_of(path).inode, path);
    std::size_t moved = 0;
    for (auto it = known.begin(); it != known.end();) {
        std::string to = wanted.count(it->first) ? "" : real_path(it->first);
        if (!to.empty() && !wanted.count(to)) {
            const auto same = by_inode.find(it->second.inode);
            to = same != by_inode.end() && stamp_of(same->second) == it->second ? same->second : "";
        }
        if (to.empty() || to == it->first) {
            ++it;
            continue;
        }
        rename_file(db, it->first, to);
        ++moved;
        if (!known.count(to))
            known[to] = it->second;
        it = known.erase(it);
    }
    return moved;
}

/// The report's rule for long values (text_escape.hpp's cut_long_value): a /meta value, an
/// identity or a label over 4,096 bytes is kept cut, with its size and hash, never the reason
/// to leave its file out.
void cut_long_values(file_summary& s) {
    if (s.launch)
        for (auto& [key, value] : s.launch->meta)
            value = cut_long_value(value);
    for (launch_case& c : s.cases) {
        c.key = cut_long_value(c.key);
        c.label = cut_long_value(c.label);
    }
}

void remove_quietly(const std::string& path) {
    std::error_code ec;
    fs::remove(path, ec);
}

} // namespace

history_index::history_index(const std::string& path, std::vector<std::string>& notes,
                             double wait_s, const std::function<void(const std::string&)>& say)
    : m_path(path),
      m_lock(
          path, wait_s, say ? say : [&notes](const std::string& line) { notes.push_back(line); }) {
    if (check_ownership(path)) { // absent or empty: created whole, beside, then renamed in
        rebuild();
        return;
    }
    std::string why;
    try {
        m_db = std::make_unique<database>(path);
        why = schema_problem(*m_db);
    } catch (const error& e) {
        why = fmt::format("is damaged ({})", terminal_text(e.what()).substr(0, 160));
    }
    if (!why.empty()) {
        notes.push_back(
            fmt::format("index '{}' {}: rebuilt from the results files", terminal_text(path), why));
        rebuild();
    }
    share_with_group(m_path);
}

void history_index::clear() {
    rebuild();
}

void history_index::rebuild() {
    // Under the lock no other process has the index open, so renaming over it is safe; a
    // stale journal of the old file must go first, or SQLite would play it into the new one.
    m_db.reset();
    const std::string fresh = m_path + ".rebuild";
    refuse_symlink(fresh, "index rebuild file");
    refuse_symlink(fresh + "-journal", "index journal");
    remove_quietly(fresh);
    remove_quietly(fresh + "-journal");
    try {
        database db(fresh);
        db.exec(schema_sql);
    } catch (const error& e) {
        remove_quietly(fresh); // the old index stays as it was
        remove_quietly(fresh + "-journal");
        std::string why = e.what(); // the index's own name, not the file beside it
        if (const auto at = why.find(terminal_text(fresh)); at != std::string::npos)
            why.replace(at, terminal_text(fresh).size(), terminal_text(m_path));
        throw error(e.kind(), why);
    }
    remove_quietly(m_path + "-journal");
    if (std::rename(fresh.c_str(), m_path.c_str()) != 0) {
        const int err = errno;
        remove_quietly(fresh);
        throw error(error_kind::io, fmt::format("index '{}': cannot replace it: {}",
                                                terminal_text(m_path), std::strerror(err)));
    }
    share_with_group(m_path);
    m_db = std::make_unique<database>(m_path);
    if (const std::string why = schema_problem(*m_db); !why.empty())
        throw error(error_kind::io, fmt::format("index '{}': cannot be created afresh: {}",
                                                terminal_text(m_path), why));
}

update_counts history_index::update(const std::vector<std::string>& given) {
    update_counts counts;
    const double read_limit_s = read_limit_from_env(); // a bad value: one line, before any work
    // Every file under its real path: the same file named two ways is one row.
    std::vector<std::string> files;
    for (const std::string& path : given)
        files.push_back(real_path(path));
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    m_db->exec("PRAGMA synchronous = NORMAL; BEGIN IMMEDIATE");
    try {
        const std::set<std::string> wanted(files.begin(), files.end());
        std::map<std::string, file_stamp> known;
        statement all = m_db->prepare("SELECT path, size, mtime_ns, inode, ctime_ns FROM files");
        while (all.step())
            known[all.text(0)] = {all.integer(1).value_or(-1), all.integer(2).value_or(-1),
                                  all.integer(3).value_or(-1), all.integer(4).value_or(-1)};
        all.reset();
        counts.migrated = migrate_to_real_paths(*m_db, known, wanted);
        for (const auto& [path, stamp] : known) {
            const file_stamp now = stamp_of(path);
            const bool gone = !wanted.count(path) || now.size < 0;
            if (!gone && now == stamp)
                continue;
            forget_file(*m_db, path);
            counts.removed += gone;
            counts.changed += !gone;
        }
        std::set<std::string> kept;
        statement left = m_db->prepare("SELECT path FROM files");
        while (left.step())
            kept.insert(left.text(0));
        std::vector<std::string> fresh;
        for (const std::string& path : files)
            kept.count(path) ? void(++counts.unchanged) : fresh.push_back(path);
        add_files(fresh, read_limit_s, counts);
        m_db->exec("COMMIT");
    } catch (...) {
        // SQLite has already rolled back on a full disk: a second ROLLBACK would replace the
        // real reason with "no transaction is active".
        if (m_db->in_transaction())
            try {
                m_db->exec("ROLLBACK");
            } catch (const error&) {
            }
        throw;
    }
    return counts;
}

void history_index::add_files(const std::vector<std::string>& paths, double read_limit_s,
                              update_counts& counts) {
    // In batches, so the summaries held at once stay few (a first index of 10,000 launches);
    // within a batch the children read side by side and the rows go in in path order.
    constexpr std::size_t batch = 256;
    index_writer writer(*m_db);
    const unsigned readers = default_readers();
    for (std::size_t from = 0; from < paths.size(); from += batch) {
        const std::vector<std::string> part(
            paths.begin() + static_cast<std::ptrdiff_t>(from),
            paths.begin() + static_cast<std::ptrdiff_t>(std::min(paths.size(), from + batch)));
        std::vector<file_stamp> stamps;
        for (const std::string& path : part)
            stamps.push_back(stamp_of(path)); // before the read: a file changed during it is
                                              // read again next time
        std::vector<file_summary> summaries = read_summaries(part, readers, {}, read_limit_s);
        for (file_summary& s : summaries)
            cut_long_values(s);
        for (std::size_t i = 0; i < part.size(); ++i)
            if (std::string note = writer.add_file(
                    part[i],
                    {stamps[i].size, stamps[i].mtime_ns, stamps[i].inode, stamps[i].ctime_ns},
                    summaries[i]);
                !note.empty())
                counts.notes.push_back(std::move(note));
        counts.read += part.size();
    }
}

index_contents history_index::load() const {
    return load_rows(*m_db);
}

} // namespace ringscale::analysis::history
