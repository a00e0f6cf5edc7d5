#include "src/engine/results_writer.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/engine/output_name.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ringscale {

const char* tool_version();
const char* git_commit();

namespace {

std::string utc_stamp(const char* format) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[64];
    std::strftime(buf, sizeof(buf), format, &tm);
    return buf;
}

void require_writable_dir(const fs::path& dir) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw config_error(
            fmt::format("--output: '{}' exists and is not a directory", dir.string()));
    fs::create_directories(dir, ec);
    if (ec)
        throw config_error(
            fmt::format("--output: cannot create directory '{}': {}", dir.string(), ec.message()));
    if (access(dir.c_str(), W_OK) != 0)
        throw config_error(
            fmt::format("--output: cannot write to '{}': {}", dir.string(), std::strerror(errno)));
}

} // namespace

std::string resolve_output_path(const launch_config& cfg, int world_size) {
    const fs::path out(cfg.output);
    if (out.extension() == ".h5") {
        require_writable_dir(out.has_parent_path() ? out.parent_path() : fs::path("."));
        if (fs::exists(out))
            throw config_error(fmt::format(
                "--output: '{}' already exists (give a new name or a directory)", cfg.output));
        return out.string();
    }
    require_writable_dir(out);
    const char* job_id = std::getenv("SLURM_JOB_ID");
    const std::string tag = job_id && *job_id ? "j" + file_name_token(job_id)
                                              : fmt::format("p{}", static_cast<long>(getpid()));
    const fs::path file = out / fmt::format("ringscale_{}_np{}_{}_{}.h5", fmt::join(cfg.jobs, "+"),
                                            world_size, utc_stamp("%Y%m%dT%H%M%SZ"), tag);
    return file.string();
}

std::uint64_t estimated_case_bytes(int rows, int world) {
    const auto r = static_cast<std::uint64_t>(rows), w = static_cast<std::uint64_t>(world);
    // Three float64 [rows][world] timing arrays and five of CPU time and hardware counts,
    // is_warmup, three uint64 [world] arrays, a few job extras of the same shapes, and
    // HDF5's object headers and attributes.
    return 10 * r * w * 8 + r + 6 * w * 8 + 8 * r + 16 * 1024;
}

std::string room_problem(const std::string& path, std::uint64_t bytes) {
    const fs::path p(path);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    struct statvfs st {};
    if (statvfs(dir.c_str(), &st) == 0) {
        const std::uint64_t free_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
        if (free_bytes < bytes)
            return fmt::format("no space left: '{}' has {} free, about {} are needed", dir.string(),
                               format_bytes(static_cast<double>(free_bytes)),
                               format_bytes(static_cast<double>(bytes)));
    }
    struct rlimit lim {};
    if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
        std::error_code ec;
        const auto size = fs::exists(p, ec) ? fs::file_size(p, ec) : 0;
        if (!ec && size + bytes > lim.rlim_cur)
            return fmt::format("file too large: the file-size limit (ulimit -f) is {}, the "
                               "file would need about {}",
                               format_bytes(static_cast<double>(lim.rlim_cur)),
                               format_bytes(static_cast<double>(size + bytes)));
    }
    return "";
}

std::uint64_t estimated_metadata_bytes(const launch_config& cfg, int world) {
    // HDF5 keeps each variable-length string in a global heap with a few dozen bytes of
    // bookkeeping; twice the text and 64 KiB of headers cover it.
    std::uint64_t text = cfg.resolved_text.size();
    for (const auto& arg : cfg.cmdline)
        text += arg.size() + 32;
    return 64 * 1024 + 2 * text + static_cast<std::uint64_t>(world) * 256;
}

results_writer::results_writer(std::string final_path, const launch_config& cfg,
                               const run_metadata& md)
    : m_final(std::move(final_path)) {
    // An explicit `-o name.h5` keeps its name; a generated one takes the next free number.
    auto [final, file] = reserve_results_file(m_final, fs::path(cfg.output).extension() == ".h5");
    m_final = final;
    m_file.emplace(std::move(file));
    errno = 0;
    try {
        m_identity = identify_file(temp_path());
        write_metadata(cfg, md);
    } catch (const error& e) {
        // A full disk while creating the file: no unreadable .part is left to fill it further.
        const int err = errno;
        m_file->discard();
        m_file.reset();
        throw error(error_kind::io,
                    fmt::format("cannot create the results file '{}': {}", temp_path(),
                                err == ENOSPC || err == EFBIG || err == EDQUOT || err == EIO
                                    ? std::strerror(err)
                                    : e.what()));
    }
}

void results_writer::write_metadata(const launch_config& cfg, const run_metadata& md) {
    auto root = m_file->root();
    root.set_attr(schema::root_attr::schema, schema_version);
    root.set_attr(schema::root_attr::created_utc, utc_stamp("%Y-%m-%dT%H:%M:%SZ"));
    root.set_attr(schema::root_attr::tool_version, tool_version());
    root.set_attr(schema::root_attr::git_commit, git_commit());
    root.set_attr(schema::root_attr::launch_id, new_launch_id());
    root.set_attr(schema::root_attr::complete, 0);
    auto meta = root.create_group(schema::meta_group);
    results::write_attrs(meta, md.attrs);
    meta.write_strings(schema::meta_cmdline, cfg.cmdline);
    meta.write_strings(schema::meta_hosts, md.hosts);
    for (const auto& [name, values] : md.host_strings)
        meta.write_strings(name, values);
    meta.write_string(schema::meta_config, cfg.resolved_text);
    auto ranks = root.create_group(schema::ranks_group);
    const hsize_t world = md.host_index.size();
    ranks.write<std::int32_t>(schema::ranks_host_index, md.host_index, {world});
    ranks.write<std::int32_t>(schema::ranks_local_rank, md.local_rank, {world});
    for (const auto& [name, values] : md.rank_ints)
        ranks.write<std::int32_t>(name, values, {world});
    for (const auto& [name, values] : md.rank_strings)
        ranks.write_strings(name, values);
    root.create_group(schema::cases_group);
    m_file->flush();
}

void results_writer::write_resumed(const std::vector<std::string>& where) {
    std::lock_guard<std::timed_mutex> lock(m_mutex);
    m_file->root().open_group(schema::meta_group).write_strings(schema::meta_resumed, where);
    m_file->flush();
}

void results_writer::append(int index, const case_record& rec) {
    std::lock_guard<std::timed_mutex> lock(m_mutex);
    const std::string where = fmt::format("cannot write case {} to '{}'", index, temp_path());
    // A deleted output directory would swallow every later case, a replaced file would be
    // published as results it does not hold: stop at once.
    require_our_file(where);
    // Known before writing: refuse cleanly rather than leave a half-written case behind.
    const std::string problem =
        room_problem(temp_path(), estimated_case_bytes(rec.rows, rec.world));
    if (!problem.empty())
        throw error(error_kind::io, where + ": " + problem);
    errno = 0;
    try {
        write_case(index, rec);
    } catch (const error& e) {
        const int err = errno;
        // Drop the half-written case so the file holds only whole cases.
        const std::string name = fmt::format("{}/{:04d}", schema::cases_group, index);
        if (H5Lexists(m_file->root().id(), name.c_str(), H5P_DEFAULT) > 0)
            H5Ldelete(m_file->root().id(), name.c_str(), H5P_DEFAULT);
        if (err == ENOSPC || err == EFBIG || err == EDQUOT || err == EIO)
            throw error(error_kind::io, fmt::format("{}: {}", where, std::strerror(err)));
        throw error(error_kind::io, fmt::format("{}: {}", where, e.what()));
    }
}

void results_writer::write_case(int index, const case_record& rec) {
    const auto cases = m_file->root().open_group(schema::cases_group);
    results::write_case_record(cases.create_group(fmt::format("{:04d}", index)), rec);
    m_file->flush();
}

void results_writer::append_probe(int index, const machine::probe& p) {
    std::lock_guard<std::timed_mutex> lock(m_mutex);
    const std::string where =
        fmt::format("cannot write sentinel probe {} to '{}'", index, temp_path());
    require_our_file(where);
    try {
        const h5::group root = m_file->root();
        const h5::group s = root.exists(schema::sentinel_group)
                                ? root.open_group(schema::sentinel_group)
                                : root.create_group(schema::sentinel_group);
        const h5::group g = s.create_group(fmt::format("{:04d}", index));
        g.set_attr(schema::sentinel_attr::before_case, p.before_case);
        g.set_attr(schema::sentinel_attr::compute_s, p.compute_s);
        g.set_attr(schema::sentinel_attr::allreduce_s, p.allreduce_s);
        const h5::group m = g.create_group(schema::machine_group);
        for (const auto& [name, values] : p.machine)
            m.write<double>(name, values, {static_cast<hsize_t>(values.size())});
        m_file->flush();
    } catch (const error& e) {
        throw error(error_kind::io, fmt::format("{}: {}", where, e.what()));
    }
}

void results_writer::write_drift(const machine::drift_verdict& v) {
    std::lock_guard<std::timed_mutex> lock(m_mutex);
    const h5::group root = m_file->root();
    if (!root.exists(schema::sentinel_group))
        return;
    const h5::group s = root.open_group(schema::sentinel_group);
    s.set_attr(schema::sentinel_attr::tolerance_compute, machine::drift_tolerance_compute);
    s.set_attr(schema::sentinel_attr::tolerance_allreduce, machine::drift_tolerance_allreduce);
    s.set_attr(schema::sentinel_attr::drifted, v.drifted ? 1 : 0);
    s.set_attr(schema::sentinel_attr::drift, v.reason);
    m_file->flush();
}

void results_writer::require_our_file(const std::string& where) const {
    if (const std::string why = file_replaced(temp_path(), m_identity); !why.empty())
        throw error(error_kind::io, where + ": " + why);
}

void results_writer::finish(bool complete) {
    std::lock_guard<std::timed_mutex> lock(m_mutex);
    finish_locked(complete);
}

bool results_writer::finish_incomplete_within(int wait_ms) {
    std::unique_lock<std::timed_mutex> lock(m_mutex, std::defer_lock);
    if (!lock.try_lock_for(std::chrono::milliseconds(wait_ms)))
        return false;
    finish_locked(false);
    return true;
}

void results_writer::finish_locked(bool complete) {
    if (!m_file)
        return;
    {
        h5::file f = std::move(*m_file);
        m_file.reset();
        if (complete) { // an incomplete file says complete=0 from its creation on
            f.root().set_attr(schema::root_attr::complete, 1);
            f.flush();
        }
    } // closed here, before the rename
    require_our_file(fmt::format("results file '{}' not published", temp_path()));
    m_final = publish_results_file(temp_path(), m_final);
}

} // namespace ringscale
