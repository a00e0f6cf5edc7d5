#include "sqlite.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <sqlite3.h>

namespace ringscale::analysis::history {

namespace {

/// "disk full" (or over a file size limit or quota) for a write that failed for want of
/// space, "" otherwise: the one line then says so, where the index is and what to do.
std::string full_reason(sqlite3* db) {
    const int extended = sqlite3_extended_errcode(db);
    const int sys = sqlite3_system_errno(db);
    if ((extended & 0xff) == SQLITE_FULL || sys == ENOSPC)
        return std::strerror(ENOSPC);
    if ((extended & 0xff) == SQLITE_IOERR && (sys == EFBIG || sys == EDQUOT))
        return std::strerror(sys);
    if (extended == SQLITE_IOERR_WRITE || extended == SQLITE_IOERR_FSYNC ||
        extended == SQLITE_IOERR_TRUNCATE)
        return "a write failed (a full disk, a file size limit or a quota?)";
    return "";
}

[[noreturn]] void fail(sqlite3* db, const char* what) {
    if (!db)
        throw error(error_kind::io, fmt::format("index: {}: out of memory", what));
    if (const std::string full = full_reason(db); !full.empty()) {
        const char* file = sqlite3_db_filename(db, "main");
        throw error(error_kind::io,
                    fmt::format("index '{}' cannot be written: {}; it is left as it was (free "
                                "space, or give --index FILE on another disk)",
                                terminal_text(file ? file : "?"), full));
    }
    throw error(error_kind::io, fmt::format("index: {}: {}", what, sqlite3_errmsg(db)));
}

} // namespace

database::database(const std::string& path) {
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
#ifdef SQLITE_OPEN_NOFOLLOW
    flags |= SQLITE_OPEN_NOFOLLOW; // a symlinked index is refused before, this closes the race
#endif
    const int rc = sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string why = m_db ? sqlite3_errmsg(m_db) : "out of memory";
        sqlite3_close(m_db);
        m_db = nullptr;
        throw error(error_kind::io, fmt::format("index: cannot open: {}", why));
    }
    // An index never needs more: a crafted file cannot make a query use unbounded memory.
    sqlite3_limit(m_db, SQLITE_LIMIT_LENGTH, 1 << 24);
    sqlite3_busy_timeout(m_db, 5000);
}

database::~database() {
    sqlite3_close(m_db);
}

void database::exec(const char* sql) const {
    char* message = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        sqlite3_free(message); // sqlite3_errmsg says the same
        fail(m_db, "write");
    }
}

bool database::in_transaction() const {
    return sqlite3_get_autocommit(m_db) == 0;
}

statement database::prepare(const char* sql) const {
    return statement(m_db, sql);
}

std::int64_t database::pragma_int(const char* name) const {
    // `name` is one of the fixed pragma names of this program, never user text.
    statement s(m_db, fmt::format("PRAGMA {}", name).c_str());
    return s.step() ? s.integer(0).value_or(0) : 0;
}

statement::statement(sqlite3* db, const char* sql) : m_db(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr) != SQLITE_OK)
        fail(db, "prepare");
}

statement::~statement() {
    sqlite3_finalize(m_stmt);
}

statement& statement::bind(int i, const std::string& text) {
    if (sqlite3_bind_text(m_stmt, i, text.data(), static_cast<int>(text.size()),
                          SQLITE_TRANSIENT) != SQLITE_OK)
        fail(m_db, "bind");
    return *this;
}

statement& statement::bind(int i, std::int64_t value) {
    if (sqlite3_bind_int64(m_stmt, i, value) != SQLITE_OK)
        fail(m_db, "bind");
    return *this;
}

statement& statement::bind(int i, double value) {
    const int rc =
        std::isnan(value) ? sqlite3_bind_null(m_stmt, i) : sqlite3_bind_double(m_stmt, i, value);
    if (rc != SQLITE_OK)
        fail(m_db, "bind");
    return *this;
}

bool statement::step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    fail(m_db, "query");
}

void statement::run() {
    while (step()) {
    }
    reset();
}

void statement::reset() {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

std::string statement::text(int i) const {
    const auto* p = sqlite3_column_text(m_stmt, i);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, i)))
             : std::string();
}

std::optional<std::int64_t> statement::integer(int i) const {
    if (sqlite3_column_type(m_stmt, i) != SQLITE_INTEGER)
        return std::nullopt;
    return sqlite3_column_int64(m_stmt, i);
}

double statement::real(int i) const {
    const int t = sqlite3_column_type(m_stmt, i);
    if (t != SQLITE_FLOAT && t != SQLITE_INTEGER)
        return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(m_stmt, i);
}

bool statement::is_text(int i) const {
    return sqlite3_column_type(m_stmt, i) == SQLITE_TEXT;
}

bool statement::is_integer(int i) const {
    return sqlite3_column_type(m_stmt, i) == SQLITE_INTEGER;
}

bool statement::is_number_or_null(int i) const {
    const int t = sqlite3_column_type(m_stmt, i);
    return t == SQLITE_FLOAT || t == SQLITE_INTEGER || t == SQLITE_NULL;
}

} // namespace ringscale::analysis::history
