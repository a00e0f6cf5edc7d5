// SQLite through Debian's libsqlite3, each C call wrapped once (HighFive's habit): a database
// handle and a prepared statement, both move-only RAII, errors thrown as ringscale::error with
// SQLite's message. Values reach SQL only as bound parameters: the statements are fixed text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace ringscale::analysis::history {

class statement;

class database {
  public:
    /// Open (or create) `path` read-write. Throws on failure.
    explicit database(const std::string& path);
    ~database();
    database(database&& o) noexcept : m_db(o.m_db) { o.m_db = nullptr; }
    database(const database&) = delete;
    database& operator=(const database&) = delete;
    database& operator=(database&&) = delete;

    /// Run fixed SQL text (no values in it; several statements allowed). Throws on failure;
    /// a write that failed for want of space says so, with the index's path.
    void exec(const char* sql) const;
    /// Whether a transaction is open (SQLite rolls one back by itself on a full disk).
    bool in_transaction() const;
    /// Prepare one fixed statement.
    statement prepare(const char* sql) const;
    /// PRAGMA `name` as an integer (application_id, user_version).
    std::int64_t pragma_int(const char* name) const;
    sqlite3* handle() const { return m_db; }

  private:
    sqlite3* m_db = nullptr;
};

class statement {
  public:
    statement(sqlite3* db, const char* sql);
    ~statement();
    statement(statement&& o) noexcept : m_db(o.m_db), m_stmt(o.m_stmt) { o.m_stmt = nullptr; }
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;
    statement& operator=(statement&&) = delete;

    /// Bind parameter `i` (1-based). NaN binds as NULL.
    statement& bind(int i, const std::string& text);
    statement& bind(int i, std::int64_t value);
    statement& bind(int i, double value);
    /// Next row: true when there is one; throws on an error.
    bool step();
    /// Run to completion (an INSERT or DELETE) and reset for the next binding.
    void run();
    /// Back to the start, bindings cleared.
    void reset();
    /// Column `i` (0-based) of the current row; a NULL is "" / nullopt / NaN.
    std::string text(int i) const;
    std::optional<std::int64_t> integer(int i) const;
    double real(int i) const;
    /// True when column `i` of the current row holds a value of the expected type.
    bool is_text(int i) const;
    bool is_integer(int i) const;
    bool is_number_or_null(int i) const;

  private:
    sqlite3* m_db;
    sqlite3_stmt* m_stmt = nullptr;
};

} // namespace ringscale::analysis::history
