#include "reader.hpp"

#include "case_checks.hpp"
#include "file_probe.hpp"

#include "src/base/error.hpp"
#include "src/base/h5.hpp"
#include "src/base/results_schema.hpp"

#include "case_groups.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <glob.h>
#include <set>

namespace ringscale::analysis {

namespace fs = std::filesystem;

namespace {

/// The detail of a wrapped HDF5 failure, without the source location and call text.
std::string short_reason(const std::string& what) {
    const auto pos = what.find("): ");
    return pos == std::string::npos ? what : what.substr(pos + 3);
}

std::map<std::string, attr_value> read_attrs(const h5::object& obj) {
    std::map<std::string, attr_value> out;
    for (const std::string& name : obj.attr_names()) {
        attr_value v;
        switch (obj.attr_kind(name)) {
        case h5::attr_type::string:
            v.text = obj.attr_string(name);
            break;
        case h5::attr_type::integer: {
            const std::int64_t i = obj.attr_int(name);
            v.text = std::to_string(i);
            v.number = static_cast<double>(i);
            v.is_integer = true;
            break;
        }
        case h5::attr_type::floating:
            v.number = obj.attr_double(name);
            v.text = fmt::format("{}", *v.number);
            break;
        default:
            v.text = "?";
        }
        out.emplace(name, std::move(v));
    }
    return out;
}

/// Read a [rows, world] float64 dataset, or return empty when `optional` and absent.
std::vector<double> read_matrix(const h5::group& g, const char* name, std::size_t rows,
                                std::size_t world, bool optional, std::uint64_t max_bytes) {
    if (!g.exists(name)) {
        if (optional)
            return {};
        throw error(error_kind::hdf5, fmt::format("dataset '{}' is missing", name));
    }
    std::vector<hsize_t> dims;
    auto data = g.read<double>(name, &dims, max_bytes);
    if (dims.size() != 2 || dims[0] != rows || dims[1] != world)
        throw error(error_kind::hdf5, fmt::format("dataset '{}' has shape [{}], expected [{}, {}]",
                                                  name, fmt::join(dims, ", "), rows, world));
    return data;
}

void compute_steps(case_data& c) {
    c.step_s.clear();
    c.step_s.reserve(c.rows);
    for (std::size_t r = 0; r < c.rows; ++r) {
        if (r < c.is_warmup.size() && c.is_warmup[r])
            continue;
        const double* row = c.time_s.data() + r * c.world;
        c.step_s.push_back(*std::max_element(row, row + c.world));
    }
}

/// The attributes of a case: ringscale/2's four groups (flat view and identity), or
/// ringscale/1's flat attributes with the identity rebuilt from the launch's config.
void read_case_attrs(const h5::group& g, case_data& c, const std::string& config_text) {
    if (c.file->schema == schema::version_1) {
        c.attrs = read_attrs(g);
        c.job = c.text("job");
        c.variant = c.text("variant");
        rebuild_v1_identity(c, config_text);
        return;
    }
    for (const schema::attr_group group : schema::all_groups) {
        const char* gname = schema::group_name(group);
        if (!g.exists(gname))
            throw error(error_kind::hdf5, fmt::format("attribute group '{}' is missing", gname));
        for (auto& [k, v] : read_attrs(g.open_group(gname))) {
            if (group == schema::attr_group::identity)
                c.identity[k] = v;
            c.attrs[k] = std::move(v); // later groups win: outcome over derived over identity
        }
    }
    c.job = c.identity.count("job") ? c.identity.at("job").text : "";
    c.variant = c.identity.count("variant") ? c.identity.at("variant").text : "";
}

/// Memory per rank, threads and allowed cores, where recorded.
void read_case_memory(const h5::group& g, case_data& c, std::uint64_t max_bytes) {
    for (const char* name :
         {schema::ds_peak_host_bytes, schema::ds_peak_device_bytes, schema::ds_peak_rss_bytes})
        if (g.exists(name)) {
            const auto v = g.read<std::uint64_t>(name, nullptr, max_bytes);
            c.memory_bytes[name].assign(v.begin(), v.end());
        }
    for (const std::string& name : schema::training_memory_datasets())
        if (g.exists(name))
            c.memory_bytes[name] = g.read<double>(name, nullptr, max_bytes);
    if (g.exists(schema::ds_threads)) {
        const auto t = g.read<std::int32_t>(schema::ds_threads, nullptr, max_bytes);
        c.threads.assign(t.begin(), t.end());
    }
    if (g.exists(schema::ds_affinity_cores)) {
        const auto a = g.read<std::int32_t>(schema::ds_affinity_cores, nullptr, max_bytes);
        c.affinity_cores.assign(a.begin(), a.end());
    }
}

/// `max_bytes`: no dataset of a file can hold more than the file's own size.
case_data read_case(const h5::group& cases, const std::string& name,
                    const std::shared_ptr<const file_info>& info, const std::string& config_text,
                    std::uint64_t max_bytes) {
    case_data c;
    c.file = info;
    c.group = name;
    const h5::group g = cases.open_group(name);
    read_case_attrs(g, c, config_text);
    c.status = c.text("status", "ok");
    c.error = c.text("error");
    if (c.job.empty())
        throw error(error_kind::hdf5, "attribute 'job' is missing");
    c.world_size = static_cast<int>(c.number("world_size").value_or(0));
    add_identity_defaults(c);
    if (!g.exists("time_s")) {
        if (c.ok())
            throw error(error_kind::hdf5, "dataset 'time_s' is missing");
        return c; // a failed or skipped case may carry no timings
    }
    std::vector<hsize_t> dims;
    c.time_s = g.read<double>("time_s", &dims, max_bytes);
    if (dims.size() != 2)
        throw error(error_kind::hdf5, "dataset 'time_s' is not 2-D [iterations, world]");
    c.rows = dims[0];
    c.world = dims[1];
    if (c.world_size == 0)
        c.world_size = static_cast<int>(c.world);
    c.compute_s = read_matrix(g, "compute_s", c.rows, c.world, true, max_bytes);
    c.comm_wait_s = read_matrix(g, "comm_wait_s", c.rows, c.world, true, max_bytes);
    if (g.exists("is_warmup")) {
        c.is_warmup = g.read<std::uint8_t>("is_warmup", nullptr, max_bytes);
        if (c.is_warmup.size() != c.rows)
            throw error(error_kind::hdf5, "dataset 'is_warmup' length differs from time_s rows");
    } else {
        c.is_warmup = warmup_from_attribute(c);
        if (c.is_warmup.empty() && c.rows > 0)
            throw error(error_kind::hdf5, "no 'is_warmup' dataset and no usable 'warmup' "
                                          "attribute: warm-up rows cannot be told from timed ones");
    }
    if (g.exists("loss"))
        c.loss = g.read<double>("loss", nullptr, max_bytes);
    read_case_memory(g, c, max_bytes);
    if (const std::string why = timing_problem(c); !why.empty())
        throw error(error_kind::hdf5, why);
    if (c.world > 0)
        compute_steps(c);
    return c;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_results_name(const std::string& name) {
    return ends_with(name, ".h5") || ends_with(name, ".h5.part");
}

void add_path(const fs::path& p, std::set<std::string>& out) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
        for (const auto& entry : fs::recursive_directory_iterator(p, ec))
            if (entry.is_regular_file(ec) && is_results_name(entry.path().filename().string()))
                out.insert(entry.path().lexically_normal().string());
        return;
    }
    out.insert(p.lexically_normal().string());
}

} // namespace

std::vector<case_data> read_results_file(const std::string& path,
                                         std::vector<std::string>* warnings) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        throw error(error_kind::io, "no such file");
    std::vector<case_data> out;
    auto f = [&] {
        try {
            return h5::file::open_read(path);
        } catch (const error&) {
            throw error(error_kind::hdf5, "not a readable HDF5 file (corrupt or truncated?)");
        }
    }();
    try {
        const h5::group root = f.root();
        if (!root.has_attr("schema"))
            throw error(error_kind::hdf5, "not a ringscale results file (no 'schema' attribute)");
        const std::string schema = root.attr_string("schema");
        if (!schema::readable(schema))
            throw error(error_kind::config,
                        fmt::format("unknown schema version '{}' (this tool reads {} and {})",
                                    schema, schema::version, schema::version_1));
        auto info = std::make_shared<file_info>();
        info->path = path;
        info->schema = schema;
        const auto root_attrs = read_attrs(root);
        auto get = [&](const char* k) {
            auto it = root_attrs.find(k);
            return it == root_attrs.end() ? std::string() : it->second.text;
        };
        info->complete = get("complete") != "0" && !ends_with(path, ".part");
        info->git_commit = get("git_commit");
        info->tool_version = get("tool_version");
        info->created_utc = get("created_utc");
        std::string config_text;
        if (root.exists("meta")) {
            const h5::group meta = root.open_group("meta");
            info->meta = read_attrs(meta);
            if (meta.exists("config"))
                config_text = meta.read_string("config");
        }
        if (!root.exists("cases")) {
            if (info->complete)
                throw error(error_kind::hdf5, "no /cases group");
            return out;
        }
        const h5::group cases = root.open_group("cases");
        const std::uint64_t max_bytes = fs::file_size(path, ec);
        std::set<std::uint64_t> seen; // object addresses: links to one case count once
        std::size_t extra_links = 0;
        std::vector<std::pair<std::string, std::string>> dropped; // case, reason
        for (const std::string& name : cases.children()) {
            try {
                if (!seen.insert(cases.object_address(name)).second) {
                    ++extra_links;
                    continue;
                }
                out.push_back(
                    read_case(cases, name, info, config_text, ec ? UINT64_MAX : max_bytes));
            } catch (const error& e) {
                dropped.emplace_back(name, short_reason(e.what()));
            }
        }
        // One line per file however many of its cases were dropped: the first one's reason.
        if (dropped.size() == 1 && warnings)
            warnings->push_back(fmt::format("{}: case {} unreadable, dropped: {}", path,
                                            dropped[0].first, dropped[0].second));
        else if (!dropped.empty() && warnings)
            warnings->push_back(fmt::format("{}: {} cases unreadable, dropped (case {}: {})", path,
                                            dropped.size(), dropped[0].first, dropped[0].second));
        if (extra_links > 0 && warnings)
            warnings->push_back(
                fmt::format("{}: {} more links to cases already read, ignored", path, extra_links));
    } catch (const error& e) {
        if (e.kind() == error_kind::hdf5 && std::string(e.what()).find("): ") != std::string::npos)
            throw error(error_kind::hdf5, "corrupt file: " + short_reason(e.what()));
        throw;
    }
    return out;
}

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs,
                                       std::vector<std::string>& problems) {
    std::set<std::string> files;
    for (const std::string& in : inputs) {
        std::error_code ec;
        if (fs::exists(in, ec)) {
            add_path(in, files);
            continue;
        }
        if (in.find_first_of("*?[") == std::string::npos) {
            problems.push_back(fmt::format("skipping {}: no such file or directory", in));
            continue;
        }
        glob_t g{};
        if (::glob(in.c_str(), 0, nullptr, &g) == 0) {
            for (std::size_t i = 0; i < g.gl_pathc; ++i)
                add_path(g.gl_pathv[i], files);
        } else {
            problems.push_back(fmt::format("skipping {}: pattern matches no file", in));
        }
        ::globfree(&g);
    }
    return {files.begin(), files.end()};
}

std::string mixed_schema_note(const std::vector<case_data>& cases) {
    std::set<std::string> v1, v2;
    for (const case_data& c : cases)
        (c.file->schema == schema::version_1 ? v1 : v2).insert(c.file->path);
    if (v1.empty() || v2.empty())
        return "";
    return fmt::format("note: inputs mix {} {} file(s) with {} {} file(s); the older files' "
                       "case identities are rebuilt from their /meta/config, so a case run "
                       "with a swept --dp, --ulysses-degree or --threads may not match",
                       v1.size(), schema::version_1, v2.size(), schema::version);
}

result_set load_results(const std::vector<std::string>& inputs, bool strict) {
    result_set rs;
    auto report = [&](std::string problem) {
        // Text from a damaged file (names, attribute values) may hold control characters:
        // one problem must stay one line.
        for (char& ch : problem)
            if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
                ch = '?';
        if (strict)
            throw config_error(problem);
        rs.problems.push_back(problem);
    };
    std::vector<std::string> expand_problems;
    const auto files = expand_inputs(inputs, expand_problems);
    for (const auto& p : expand_problems)
        report(p);
    for (const std::string& path : files) {
        std::vector<std::string> warnings;
        // A damaged file can crash HDF5 itself or declare sizes that exhaust memory: read it
        // once in a disposable child first (analysis/file_probe.hpp).
        const std::string unsafe = probe_in_child([&] { read_results_file(path); });
        if (!unsafe.empty()) {
            report(fmt::format("skipping {}: {}", path, unsafe));
            continue;
        }
        try {
            auto cases = read_results_file(path, &warnings);
            rs.files.push_back(path);
            for (auto& c : cases)
                rs.cases.push_back(std::move(c));
        } catch (const error& e) {
            report(fmt::format("skipping {}: {}", path, e.what()));
            continue;
        }
        for (const auto& w : warnings)
            report(w);
    }
    // Nothing usable at all: one error line (exit 2), not a skip line and then another.
    if (rs.cases.empty() && !rs.problems.empty())
        throw config_error(rs.problems.size() == 1
                               ? rs.problems.front()
                               : fmt::format("{} (and {} more problems)", rs.problems.front(),
                                             rs.problems.size() - 1));
    for (const auto& problem : rs.problems)
        std::fprintf(stderr, "ringscale-stats: %s\n", problem.c_str());
    const std::string mixed = mixed_schema_note(rs.cases);
    if (!mixed.empty())
        std::fprintf(stderr, "ringscale-stats: %s\n", mixed.c_str());
    return rs;
}

} // namespace ringscale::analysis
