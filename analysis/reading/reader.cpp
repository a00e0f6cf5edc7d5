#include "reader.hpp"

#include "analysis/cases/record_cases.hpp"
#include "case_checks.hpp"
#include "file_probe.hpp"
#include "launches.hpp"

#include "src/base/child_limits.hpp"
#include "src/base/error.hpp"
#include "src/base/h5.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/stored_machine.hpp"
#include "src/base/text_escape.hpp"

#include "analysis/cases/case_groups.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <glob.h>
#include <set>

namespace ringscale::analysis {

namespace fs = std::filesystem;

namespace {

using stored::read_attrs;

/// Every text value of `m` cut to long_value_bytes (text_escape.hpp): one rule for the
/// report, the tables and history's index, so one long label cannot fill a page.
void cut_long_values(std::map<std::string, attr_value>& m) {
    for (auto& [name, v] : m)
        if (v.text.size() > long_value_bytes)
            v.text = cut_long_value(v.text);
}

/// `max_bytes`: no dataset of a file can hold more than the file's own size.
case_data read_case(const h5::group& cases, const std::string& name,
                    const std::shared_ptr<const file_info>& info, const std::string& config_text,
                    std::uint64_t max_bytes) {
    const h5::group g = cases.open_group(name);
    const bool v1 = info->schema == schema::version_1;
    case_data c = case_from_record(v1 ? stored::read_v1_case_record(g, max_bytes)
                                      : stored::read_case_record(g, max_bytes),
                                   info, terminal_text(name));
    if (v1) // ringscale/1: the identity rebuilt from the launch's config (case_groups.hpp)
        rebuild_v1_identity(c, config_text);
    cut_long_values(c.identity);
    cut_long_values(c.attrs);
    add_identity_defaults(c); // files written before the topology ran on one node
    return c;
}

/// Every case of `cases`, of the file `info` describes: links to one case count once, a
/// duplicated case group is dropped, and an unreadable case is dropped; one line in
/// `warnings` per kind of trouble, however many cases it hit (the first one's reason).
std::vector<case_data> read_cases(const h5::group& cases,
                                  const std::shared_ptr<const file_info>& info,
                                  const std::string& config_text,
                                  std::vector<std::string>* warnings) {
    const std::string& path = info->path;
    std::error_code ec;
    const std::uint64_t max_bytes = fs::file_size(path, ec);
    std::vector<case_data> out;
    std::set<std::uint64_t> seen; // object addresses: links to one case count once
    std::size_t extra_links = 0;
    std::vector<std::pair<std::string, std::string>> dropped;     // case, reason
    std::vector<std::pair<std::string, std::string>> no_accuracy; // case, reason
    for (const std::string& name : cases.children()) {
        try {
            if (!seen.insert(cases.object_address(name)).second) {
                ++extra_links;
                continue;
            }
            out.push_back(read_case(cases, name, info, config_text, ec ? UINT64_MAX : max_bytes));
            if (std::string why = drop_untrusted_accuracy(out.back()); !why.empty())
                no_accuracy.emplace_back(out.back().group, why);
        } catch (const error& e) {
            dropped.emplace_back(terminal_text(name), short_reason(e.what()));
        }
    }
    std::vector<std::pair<std::string, std::string>> notes; // case, what was dropped
    for (const case_data& c : out)
        for (const std::string& n : c.read_notes)
            notes.emplace_back(c.group, n);
    if (!notes.empty() && warnings)
        warnings->push_back(
            notes.size() == 1
                ? fmt::format("{}: case {}: {}", path, notes[0].first, notes[0].second)
                : fmt::format("{}: case {}: {} (and {} more such lines)", path, notes[0].first,
                              notes[0].second, notes.size() - 1));
    for (const auto& [group, earlier] : drop_duplicate_cases(out))
        dropped.emplace_back(group, fmt::format("the same case as case {} (same identity and "
                                                "run): a duplicated case group",
                                                earlier));
    if (dropped.size() == 1 && warnings)
        warnings->push_back(fmt::format("{}: case {} unreadable, dropped: {}", path,
                                        dropped[0].first, dropped[0].second));
    else if (!dropped.empty() && warnings)
        warnings->push_back(fmt::format("{}: {} cases unreadable, dropped (case {}: {})", path,
                                        dropped.size(), dropped[0].first, dropped[0].second));
    if (!no_accuracy.empty() && warnings) // the cases stay: their timings are not in doubt
        warnings->push_back(no_accuracy.size() == 1
                                ? fmt::format("{}: case {}: accuracy fields dropped: {}", path,
                                              no_accuracy[0].first, no_accuracy[0].second)
                                : fmt::format("{}: {} cases' accuracy fields dropped (case {}: {})",
                                              path, no_accuracy.size(), no_accuracy[0].first,
                                              no_accuracy[0].second));
    if (extra_links > 0 && warnings)
        warnings->push_back(
            fmt::format("{}: {} more links to cases already read, ignored", path, extra_links));
    return out;
}

/// The sentinel's probes judged again (src/base/machine_marks.hpp): the launch's verdict in
/// `info`, each case's drift mark by its run index (its group's number).
void read_drift(const h5::group& root, std::size_t case_groups, file_info& info,
                std::vector<case_data>& cases, std::vector<std::string>* warnings) {
    std::error_code ec;
    const std::uint64_t max_bytes = fs::file_size(info.path, ec);
    const stored::sentinel_record s =
        stored::read_sentinel(root, static_cast<int>(case_groups), ec ? UINT64_MAX : max_bytes);
    if (!s.problem.empty() && warnings)
        warnings->push_back(fmt::format("{}: {}", info.path, s.problem));
    info.probes = static_cast<int>(s.probes.size());
    if (s.probes.empty())
        return;
    const machine::drift_verdict v = machine::judge_drift(s.probes, static_cast<int>(case_groups));
    info.drift = v.reason;
    for (case_data& c : cases) {
        char* end = nullptr;
        const long i = std::strtol(c.group.c_str(), &end, 10);
        if (!c.group.empty() && *end == '\0' && i >= 0 &&
            static_cast<std::size_t>(i) < v.case_reason.size()) {
            c.drift = v.case_reason[static_cast<std::size_t>(i)];
            c.drift_effect = v.case_effect[static_cast<std::size_t>(i)];
        }
    }
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
        if (!root.has_attr(schema::root_attr::schema))
            throw error(error_kind::hdf5, "not a ringscale results file (no 'schema' attribute)");
        const std::string schema = root.attr_string(schema::root_attr::schema);
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
        info->complete = get(schema::root_attr::complete) != "0" && !ends_with(path, ".part");
        info->git_commit = get(schema::root_attr::git_commit);
        info->tool_version = get(schema::root_attr::tool_version);
        info->created_utc = get(schema::root_attr::created_utc);
        info->launch = launch_key(path, root_attrs);
        std::string config_text;
        if (root.exists(schema::meta_group)) {
            const h5::group meta = root.open_group(schema::meta_group);
            info->meta = read_attrs(meta);
            cut_long_values(info->meta);
            if (meta.exists(schema::meta_config))
                config_text = meta.read_string(schema::meta_config);
        }
        if (!root.exists(schema::cases_group)) {
            if (info->complete)
                throw error(error_kind::hdf5, "no /cases group");
            return out;
        }
        const h5::group cases = root.open_group(schema::cases_group);
        out = read_cases(cases, info, config_text, warnings);
        read_drift(root, cases.children().size(), *info, out, warnings);
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
    launch_registry launches;
    auto report = [&](std::string problem) {
        // Text from a damaged file (names, attribute values) may hold control characters:
        // one problem must stay one line, and never drive the terminal.
        problem = terminal_text(problem);
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
        // once in a disposable child first (analysis/reading/file_probe.hpp), the same call
        // as below: HDF5's path on a damaged file can depend on the heap's layout.
        const std::string unsafe = probe_in_child([&] {
            std::vector<std::string> ignored;
            read_results_file(path, &ignored);
        });
        if (!unsafe.empty()) {
            report(fmt::format("skipping {}: {}", path, unsafe));
            continue;
        }
        try {
            const scoped_memory_cap cap; // as the child had: the same path through HDF5
            auto cases = read_results_file(path, &warnings);
            const std::string earlier =
                cases.empty() ? "" : launches.earlier_file(*cases.front().file);
            if (!earlier.empty()) {
                // Copies of one launch (same launch_id) can differ when one is damaged: the
                // copy with more readable cases counts, whichever path sorts first.
                const auto from_earlier = [&](const case_data& c) {
                    return c.file->path == earlier;
                };
                const auto kept = static_cast<std::size_t>(
                    std::count_if(rs.cases.begin(), rs.cases.end(), from_earlier));
                const bool fuller = cases.size() > kept;
                rs.notes.push_back(terminal_text(fmt::format(
                    "{} holds the same launch as {} ({}): counted once{}", path, earlier,
                    cases.front().file->launch.rfind("id:", 0) == 0 ? "same launch_id"
                                                                    : "identical bytes",
                    fuller ? fmt::format(", from {} ({} readable cases against {})", path,
                                         cases.size(), kept)
                           : "")));
                if (!fuller)
                    continue;
                rs.cases.erase(std::remove_if(rs.cases.begin(), rs.cases.end(), from_earlier),
                               rs.cases.end());
                rs.files.erase(std::remove(rs.files.begin(), rs.files.end(), earlier),
                               rs.files.end());
                launches.replace_file(*cases.front().file, earlier);
            }
            rs.files.push_back(path);
            for (auto& c : cases)
                rs.cases.push_back(std::move(c));
        } catch (const error& e) {
            report(fmt::format("skipping {}: {}", path, e.what()));
            continue;
        } catch (const std::bad_alloc&) {
            report(fmt::format("skipping {}: {}", path, child_memory_reason({})));
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
    for (const auto& note : rs.notes)
        std::fprintf(stderr, "ringscale-stats: note: %s\n", note.c_str());
    const std::string mixed = mixed_schema_note(rs.cases);
    if (!mixed.empty())
        std::fprintf(stderr, "ringscale-stats: %s\n", mixed.c_str());
    return rs;
}

} // namespace ringscale::analysis
