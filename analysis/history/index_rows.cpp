#include "index_rows.hpp"

#include "src/base/text_escape.hpp"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

namespace ringscale::analysis::history {

namespace {

/// Text as this program writes it: at most `max` bytes, no control character.
bool clean_text(const std::string& s, std::size_t max) {
    if (s.size() > max)
        return false;
    for (const unsigned char c : s)
        if (c < 0x20 || c == 0x7f)
            return false;
    return true;
}

std::string meta_json(const std::map<std::string, std::string>& meta) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : meta)
        j[k] = v;
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The reader's limits (read_launch, read_case, parse_meta), shared with the writer.
constexpr std::size_t max_launch = 512, max_path = 4096, max_created = 64, max_commit = 256,
                      max_meta_fields = 1000, max_meta_key = 256, max_meta_value = 4096,
                      max_identity = 4096, max_machine = 1024;

/// "" when `s` is clean text of at most `max` bytes, else why `field` is not.
std::string text_problem(const std::string& field, const std::string& s, std::size_t max) {
    if (s.size() > max)
        return fmt::format("its {} is {} bytes, over the {} the index keeps", field, s.size(), max);
    if (!clean_text(s, max))
        return fmt::format("its {} holds a control character", field);
    return "";
}

[[noreturn]] void damaged(const std::string& what) {
    throw damaged_index(what);
}

std::map<std::string, std::string> parse_meta(const std::string& text) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
        damaged("a launch's metadata is not JSON");
    }
    if (!j.is_object() || j.size() > max_meta_fields)
        damaged("a launch's metadata is not an object of at most 1000 fields");
    std::map<std::string, std::string> meta;
    for (const auto& [k, v] : j.items()) {
        if (!v.is_string() || !clean_text(k, max_meta_key) ||
            !clean_text(v.get<std::string>(), max_meta_value))
            damaged("a launch's metadata holds a value no launch writes");
        meta[k] = v.get<std::string>();
    }
    return meta;
}

bool finite_positive(double v) {
    return std::isfinite(v) && v > 0;
}

bool absent_or_nonnegative(double v) {
    return std::isnan(v) || (std::isfinite(v) && v >= 0);
}

/// Whether a case's figures are ones a launch measures.
bool figures_measured(const launch_case& c) {
    return c.iterations >= 1 && c.iterations <= (1LL << 40) && finite_positive(c.step_s) &&
           c.step_s <= 1e6 && absent_or_nonnegative(c.compute_s) &&
           absent_or_nonnegative(c.comm_s) && absent_or_nonnegative(c.wait_s) &&
           absent_or_nonnegative(c.memory_bytes) && absent_or_nonnegative(c.compute_cpu_s);
}

launch_record read_launch(const statement& s) {
    for (int i : {0, 1, 2, 4, 6})
        if (!s.is_text(i))
            damaged("a launch row holds a value of the wrong type");
    if (!s.is_integer(3) || !s.is_integer(5))
        damaged("a launch row holds a value of the wrong type");
    launch_record l;
    l.launch = s.text(0);
    l.path = s.text(1);
    l.created_utc = s.text(2);
    l.time_s = *s.integer(3);
    l.git_commit = s.text(4);
    l.complete = *s.integer(5) != 0;
    if (l.launch.empty() || !clean_text(l.launch, max_launch) || !clean_text(l.path, max_path) ||
        !clean_text(l.created_utc, max_created) || !clean_text(l.git_commit, max_commit))
        damaged("a launch row holds text no launch writes");
    l.meta = parse_meta(s.text(6));
    return l;
}

launch_case read_case(const statement& s) {
    for (int i : {0, 1, 2, 9})
        if (!s.is_text(i))
            damaged("a case row holds a value of the wrong type");
    if (!s.is_integer(3) || !s.is_number_or_null(4) || !s.is_number_or_null(5) ||
        !s.is_number_or_null(6) || !s.is_number_or_null(7) || !s.is_number_or_null(8) ||
        !s.is_number_or_null(10))
        damaged("a case row holds a value of the wrong type");
    launch_case c;
    c.launch = s.text(0);
    c.key = s.text(1);
    c.label = s.text(2);
    c.iterations = *s.integer(3);
    int column = 4; // the figures, in their columns' order
    for (double* v : {&c.step_s, &c.compute_s, &c.comm_s, &c.wait_s, &c.memory_bytes})
        *v = s.real(column++);
    c.machine = s.text(9);
    c.compute_cpu_s = s.real(10);
    if (c.key.empty() || !clean_text(c.key, max_identity) || !clean_text(c.label, max_identity) ||
        !clean_text(c.machine, max_machine))
        damaged("a case row holds text no launch writes");
    if (!figures_measured(c))
        damaged("a case row holds a figure no launch measures");
    return c;
}

/// Why a launch record breaks the reader's limits, or "".
std::string launch_problem(const launch_record& l) {
    for (const auto& [field, text, max] : {std::tuple<const char*, const std::string&, std::size_t>{
                                               "launch_id", l.launch, max_launch},
                                           {"created_utc", l.created_utc, max_created},
                                           {"git_commit", l.git_commit, max_commit}})
        if (std::string why = text_problem(field, text, max); !why.empty())
            return why;
    if (l.meta.size() > max_meta_fields)
        return fmt::format("its /meta holds {} attributes, over the {} the index keeps",
                           l.meta.size(), max_meta_fields);
    for (const auto& [k, v] : l.meta) {
        if (std::string why = text_problem("/meta attribute name", k, max_meta_key); !why.empty())
            return why + fmt::format(" ('{}')", terminal_text(k.substr(0, 40)));
        if (std::string why =
                text_problem(fmt::format("/meta {}", terminal_text(k)), v, max_meta_value);
            !why.empty())
            return why;
    }
    return "";
}

/// Why a case summary breaks the reader's limits, or "".
std::string case_problem(const launch_case& c) {
    if (std::string why = text_problem("identity (case key)", c.key, max_identity); !why.empty())
        return why;
    if (std::string why = text_problem("case label", c.label, max_identity); !why.empty())
        return why;
    if (std::string why = text_problem("machine mark", c.machine, max_machine); !why.empty())
        return why;
    return figures_measured(c) ? ""
                               : "its case '" + terminal_text(c.label.substr(0, 80)) +
                                     "' holds a figure out of range (iterations or times)";
}

} // namespace

std::string beyond_limits(const std::string& path, const file_summary& summary) {
    if (std::string why = text_problem("name", path, max_path); !why.empty())
        return why + " (rename it)";
    if (!summary.launch)
        return "";
    if (std::string why = launch_problem(*summary.launch); !why.empty())
        return why;
    if (std::string why = date_problem(*summary.launch); !why.empty())
        return why + ": left out of every series";
    for (const launch_case& c : summary.cases)
        if (std::string why = case_problem(c); !why.empty())
            return why;
    return "";
}

void forget_file(database& db, const std::string& path) {
    statement which = db.prepare("SELECT launch FROM files WHERE path = ?1");
    which.bind(1, path);
    const std::string launch = which.step() ? which.text(0) : "";
    which.reset();
    db.prepare("DELETE FROM files WHERE path = ?1").bind(1, path).run();
    if (launch.empty())
        return;
    statement owner = db.prepare("SELECT path FROM launches WHERE launch = ?1");
    owner.bind(1, launch);
    if (!owner.step() || owner.text(0) != path)
        return;
    owner.reset();
    for (const char* sql :
         {"DELETE FROM cases WHERE launch = ?1", "DELETE FROM launches WHERE launch = ?1",
          "DELETE FROM files WHERE launch = ?1"})
        db.prepare(sql).bind(1, launch).run();
}

void rename_file(database& db, const std::string& from, const std::string& to) {
    statement there = db.prepare("SELECT 1 FROM files WHERE path = ?1");
    there.bind(1, to);
    if (there.step()) { // already under its real path: the other spelling's row goes
        there.reset();
        forget_file(db, from);
        return;
    }
    there.reset();
    for (const char* sql : {"UPDATE files SET path = ?2 WHERE path = ?1",
                            "UPDATE launches SET path = ?2 WHERE path = ?1"})
        db.prepare(sql).bind(1, from).bind(2, to).run();
}

index_writer::index_writer(database& db)
    : m_db(db),
      m_file(db.prepare("INSERT OR REPLACE INTO files(path, size, mtime_ns, inode, ctime_ns, "
                        "launch, problem) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")),
      m_launch(db.prepare("INSERT INTO launches(launch, path, created_utc, time_s, git_commit, "
                          "complete, meta) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")),
      m_case(db.prepare("INSERT OR REPLACE INTO cases(launch, case_key, label, iterations, "
                        "step_s, compute_s, comm_s, wait_s, memory_bytes, machine, "
                        "compute_cpu_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")),
      m_owner(db.prepare("SELECT path FROM launches WHERE launch = ?1")) {}

std::string index_writer::add_file(const std::string& path, const file_key& key,
                                   const file_summary& summary) {
    // A file beyond the reader's limits is kept as a problem (named on every run, as an
    // unreadable file is), never as rows the reader would refuse for the whole index.
    const std::string over = summary.problem.empty() ? beyond_limits(path, summary) : "";
    const std::string launch = summary.launch && over.empty() ? summary.launch->launch : "";
    const std::string problem = over.empty() ? summary.problem : over;
    // A read that ran out of time is kept under a size no file has: read again next run.
    m_file.bind(1, path).bind(2, summary.retry ? std::int64_t{-1} : key.size);
    m_file.bind(3, key.mtime_ns).bind(4, key.inode);
    m_file.bind(5, key.ctime_ns).bind(6, launch);
    m_file.bind(7, terminal_text(problem).substr(0, 300)).run();
    if (launch.empty()) // a problem is reported from the index (load_rows), on every run
        return "";
    m_owner.bind(1, launch);
    if (m_owner.step()) {
        std::string note = fmt::format("{} holds the launch already read from {}: counted once",
                                       terminal_text(path), terminal_text(m_owner.text(0)));
        m_owner.reset();
        return note;
    }
    m_owner.reset();
    const launch_record& l = *summary.launch;
    m_launch.bind(1, l.launch).bind(2, l.path).bind(3, l.created_utc).bind(4, l.time_s);
    m_launch.bind(5, l.git_commit).bind(6, std::int64_t{l.complete}).bind(7, meta_json(l.meta));
    m_launch.run();
    for (const launch_case& c : summary.cases) {
        m_case.bind(1, c.launch).bind(2, c.key).bind(3, c.label).bind(4, c.iterations);
        m_case.bind(5, c.step_s).bind(6, c.compute_s).bind(7, c.comm_s).bind(8, c.wait_s);
        m_case.bind(9, c.memory_bytes).bind(10, c.machine).bind(11, c.compute_cpu_s).run();
    }
    return "";
}

index_contents load_rows(database& db) {
    index_contents out;
    std::set<std::string> launches;
    statement l = db.prepare(
        "SELECT launch, path, created_utc, time_s, git_commit, complete, meta FROM launches");
    while (l.step()) {
        out.launches.push_back(read_launch(l));
        launches.insert(out.launches.back().launch);
    }
    statement c = db.prepare("SELECT launch, case_key, label, iterations, step_s, compute_s, "
                             "comm_s, wait_s, memory_bytes, machine, compute_cpu_s FROM cases");
    while (c.step()) {
        out.cases.push_back(read_case(c));
        if (!launches.count(out.cases.back().launch))
            damaged("a case row names a launch the index does not hold");
    }
    statement p = db.prepare("SELECT path, problem FROM files WHERE problem != ''");
    while (p.step()) {
        // A file's name is the user's (any byte but '/' and NUL): printed escaped.
        if (p.text(0).size() > max_path || !clean_text(p.text(1), 1024))
            damaged("a file row holds text no reader writes");
        out.problems.push_back(fmt::format("skipping {}: {}", terminal_text(p.text(0)), p.text(1)));
        out.problem_kinds.push_back(p.text(1));
    }
    return out;
}

} // namespace ringscale::analysis::history
