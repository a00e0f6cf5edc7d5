#include "index.hpp"

#include "file_summaries.hpp"
#include "index_rows.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
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
constexpr std::int64_t format_version = 1;

constexpr const char* schema_sql = R"(
CREATE TABLE files(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                   launch TEXT NOT NULL, problem TEXT NOT NULL);
CREATE TABLE launches(launch TEXT PRIMARY KEY, path TEXT NOT NULL, created_utc TEXT NOT NULL,
                      time_s INTEGER NOT NULL, git_commit TEXT NOT NULL,
                      complete INTEGER NOT NULL, meta TEXT NOT NULL);
CREATE TABLE cases(launch TEXT NOT NULL, case_key TEXT NOT NULL, label TEXT NOT NULL,
                   iterations INTEGER NOT NULL, step_s REAL NOT NULL, compute_s REAL,
                   comm_s REAL, wait_s REAL, memory_bytes REAL, machine TEXT NOT NULL,
                   PRIMARY KEY(launch, case_key)) WITHOUT ROWID;
PRAGMA application_id = 1381189705;
PRAGMA user_version = 1;
)";

/// Whether `path` may be opened as an index: absent, empty, or an SQLite file. Anything else
/// is not ours to overwrite.
void check_file_kind(const std::string& path) {
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || st.type() == fs::file_type::not_found)
        return;
    if (st.type() != fs::file_type::regular)
        throw config_error(fmt::format("index '{}' is not a regular file", terminal_text(path)));
    if (fs::file_size(path, ec) == 0)
        return;
    char head[16] = {};
    std::ifstream in(path, std::ios::binary);
    in.read(head, sizeof head);
    if (std::string(head, static_cast<std::size_t>(in.gcount())) !=
        std::string("SQLite format 3\0", 16))
        throw config_error(fmt::format("index '{}' is not an SQLite file: not overwritten "
                                       "(delete it, or name another with --index FILE)",
                                       terminal_text(path)));
}

/// Why the open database is not this version's index, or "" when it is (or is new: then
/// the schema is created).
std::string schema_problem(database& db) {
    const std::int64_t app = db.pragma_int("application_id");
    const std::int64_t version = db.pragma_int("user_version");
    if (app == 0 && version == 0 && db.pragma_int("page_count") <= 1) {
        db.exec(schema_sql);
        return "";
    }
    if (app != application_id)
        return "is not a ringscale history index";
    if (version != format_version)
        return fmt::format("is from another version (format {}, this one reads {})", version,
                           format_version);
    statement check = db.prepare("PRAGMA quick_check");
    if (!check.step() || check.text(0) != "ok")
        return "is damaged (" + terminal_text(check.text(0)).substr(0, 120) + ")";
    for (const char* probe : {"SELECT path, size, mtime_ns, launch, problem FROM files LIMIT 0",
                              "SELECT launch, path, created_utc, time_s, git_commit, complete, "
                              "meta FROM launches LIMIT 0",
                              "SELECT launch, case_key, label, iterations, step_s, compute_s, "
                              "comm_s, wait_s, memory_bytes, machine FROM cases LIMIT 0"})
        db.prepare(probe); // throws when a table or column is missing
    return "";
}

struct file_stamp {
    std::int64_t size = -1;
    std::int64_t mtime_ns = -1;
};

file_stamp stamp_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return {};
    return {static_cast<std::int64_t>(st.st_size),
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

} // namespace

history_index::history_index(const std::string& path, std::vector<std::string>& notes)
    : m_path(path) {
    check_file_kind(path);
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
        clear();
    }
}

void history_index::clear() {
    m_db.reset();
    std::error_code ec;
    fs::remove(m_path, ec);
    fs::remove(m_path + "-journal", ec);
    m_db = std::make_unique<database>(m_path);
    if (const std::string why = schema_problem(*m_db); !why.empty())
        throw error(error_kind::io, fmt::format("index '{}': cannot be created afresh: {}",
                                                terminal_text(m_path), why));
}

update_counts history_index::update(const std::vector<std::string>& files) {
    update_counts counts;
    m_db->exec("PRAGMA synchronous = NORMAL; BEGIN IMMEDIATE");
    try {
        const std::set<std::string> wanted(files.begin(), files.end());
        std::map<std::string, file_stamp> known;
        statement all = m_db->prepare("SELECT path, size, mtime_ns FROM files");
        while (all.step())
            known[all.text(0)] = {all.integer(1).value_or(-1), all.integer(2).value_or(-1)};
        for (const auto& [path, stamp] : known) {
            const file_stamp now = stamp_of(path);
            const bool gone = !wanted.count(path) || now.size < 0;
            if (!gone && now.size == stamp.size && now.mtime_ns == stamp.mtime_ns)
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
        add_files(fresh, counts);
        m_db->exec("COMMIT");
    } catch (...) {
        m_db->exec("ROLLBACK");
        throw;
    }
    return counts;
}

void history_index::add_files(const std::vector<std::string>& paths, update_counts& counts) {
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
        const std::vector<file_summary> summaries = read_summaries(part, readers);
        for (std::size_t i = 0; i < part.size(); ++i)
            if (std::string note =
                    writer.add_file(part[i], stamps[i].size, stamps[i].mtime_ns, summaries[i]);
                !note.empty())
                counts.notes.push_back(std::move(note));
        counts.read += part.size();
    }
}

index_contents history_index::load() const {
    return load_rows(*m_db);
}

} // namespace ringscale::analysis::history
