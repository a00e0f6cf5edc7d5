#include "src/launcher/results_writer.hpp"

#include "src/error.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
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
    const std::string tag = job_id && *job_id ? std::string("j") + job_id
                                              : fmt::format("p{}", static_cast<long>(getpid()));
    std::string jobs;
    for (const auto& j : cfg.jobs)
        jobs += (jobs.empty() ? "" : "+") + j;
    const fs::path file = out / fmt::format("ringscale_{}_np{}_{}_{}.h5", jobs, world_size,
                                            utc_stamp("%Y%m%dT%H%M%SZ"), tag);
    return file.string();
}

void write_attrs(const h5::object& obj, const jobs::attr_map& attrs) {
    for (const auto& [name, value] : attrs)
        std::visit([&](const auto& v) { obj.set_attr(name, v); }, value);
}

results_writer::results_writer(std::string final_path, const launch_config& cfg,
                               const run_metadata& md)
    : m_final(std::move(final_path)) {
    m_file.emplace(h5::file::create(temp_path()));
    auto root = m_file->root();
    root.set_attr("schema", schema_version);
    root.set_attr("created_utc", utc_stamp("%Y-%m-%dT%H:%M:%SZ"));
    root.set_attr("tool_version", tool_version());
    root.set_attr("git_commit", git_commit());
    root.set_attr("complete", 0);
    auto meta = root.create_group("meta");
    write_attrs(meta, md.attrs);
    meta.write_strings("cmdline", cfg.cmdline);
    meta.write_strings("hosts", md.hosts);
    meta.write_string("config", cfg.resolved_text);
    auto ranks = root.create_group("ranks");
    const hsize_t world = md.host_index.size();
    ranks.write<std::int32_t>("host_index", md.host_index, {world});
    ranks.write<std::int32_t>("local_rank", md.local_rank, {world});
    root.create_group("cases");
    m_file->flush();
}

void results_writer::append(int index, const case_record& rec) {
    auto g = m_file->root().open_group("cases").create_group(fmt::format("{:04d}", index));
    write_attrs(g, rec.attrs);
    const hsize_t rows = static_cast<hsize_t>(rec.rows), world = static_cast<hsize_t>(rec.world);
    g.write<double>("time_s", rec.time_s, {rows, world});
    g.write<double>("compute_s", rec.compute_s, {rows, world});
    g.write<double>("comm_wait_s", rec.comm_wait_s, {rows, world});
    g.write<std::uint8_t>("is_warmup", rec.is_warmup, {rows});
    g.write<std::uint64_t>("peak_host_bytes", rec.peak_host_bytes, {world});
    g.write<std::uint64_t>("peak_device_bytes", rec.peak_device_bytes, {world});
    g.write<std::uint64_t>("peak_rss_bytes", rec.peak_rss_bytes, {world});
    for (const auto& [name, values] : rec.per_iteration)
        g.write<double>(name, values, {static_cast<hsize_t>(values.size())});
    for (const auto& [name, values] : rec.per_rank)
        g.write<double>(name, values, {world});
    m_file->flush();
}

void results_writer::finish(bool complete) {
    if (!m_file)
        return;
    m_file->root().set_attr("complete", complete ? 1 : 0);
    m_file->flush();
    m_file.reset();
    std::error_code ec;
    fs::rename(temp_path(), m_final, ec);
    if (ec)
        throw error(error_kind::io, fmt::format("cannot rename '{}' to '{}': {}", temp_path(),
                                                m_final, ec.message()));
}

} // namespace ringscale
