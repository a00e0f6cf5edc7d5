#include "src/engine/resume.hpp"

#include "src/base/child_limits.hpp"
#include "src/base/error.hpp"
#include "src/base/h5.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/stored_case.hpp"
#include "src/base/text_escape.hpp"
#include "src/engine/results_probe.hpp"
#include "src/engine/results_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

namespace fs = std::filesystem;

namespace ringscale {

namespace {

bool is_results_name(const std::string& name) {
    auto ends = [&](const std::string& s) {
        return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    return ends(".h5") || ends(".h5.part");
}

/// Case `name` of `cases`, when it counts as completed: the case_key of a case whose status
/// is ok and which ringscale-stats would use. Whether it is usable is decided by the reader's
/// own code (stored::read_case_record), so a case the statistics refuse is run again. "" when
/// it is not completed; a case that says ok but cannot be used is named on stderr.
std::string completed_key(const h5::group& cases, const std::string& name,
                          const std::string& file_name, std::uint64_t max_bytes) {
    std::string key;
    try {
        const results::case_record rec =
            stored::read_case_record(cases.open_group(name), max_bytes);
        if (stored::status_of(rec) != schema::status::ok)
            return "";
        key = rec.case_key;
    } catch (const error& e) {
        std::fprintf(stderr,
                     "ringscale: warning: --resume: %s:/cases/%s cannot be used (%s); it "
                     "runs again\n",
                     terminal_text(file_name).c_str(), terminal_text(name).c_str(),
                     terminal_text(short_reason(e.what())).c_str());
    }
    return key;
}

} // namespace

std::map<std::string, std::string> read_completed_cases(const std::string& file_path) {
    const fs::path path(file_path);
    std::map<std::string, std::string> done;
    const h5::file f = h5::file::open_read(path.string());
    const h5::group root = f.root();
    const std::string schema =
        root.has_attr(schema::root_attr::schema) ? root.attr_string(schema::root_attr::schema) : "";
    if (schema == schema::version_1)
        throw std::runtime_error(fmt::format("a {} file of an older ringscale (its cases are "
                                             "keyed differently and run again)",
                                             schema::version_1));
    if (schema != schema::version)
        throw std::runtime_error(fmt::format("not a {} file", schema::version));
    const h5::group cases = root.open_group(schema::cases_group);
    std::error_code ec;
    const std::uint64_t max_bytes = fs::file_size(path, ec);
    for (const auto& name : cases.children()) {
        const std::string key =
            completed_key(cases, name, path.filename().string(), ec ? UINT64_MAX : max_bytes);
        if (!key.empty())
            done.emplace(key, path.filename().string() + ":/cases/" + name);
    }
    return done;
}

std::vector<std::string> find_completed(const std::vector<std::string>& keys,
                                        const std::string& dir) {
    std::map<std::string, std::string> done;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.is_regular_file(ec) && is_results_name(entry.path().filename().string()))
            files.push_back(entry.path());
    std::sort(files.begin(), files.end()); // the same answer whatever the directory order
    for (const auto& path : files) {
        const std::string unsafe = probe_results_file(path.string());
        if (!unsafe.empty()) {
            std::fprintf(stderr,
                         "ringscale: warning: --resume: prior file unreadable: '%s': %s; its "
                         "cases will run again\n",
                         terminal_text(path.string()).c_str(), unsafe.c_str());
            continue;
        }
        try {
            const scoped_memory_cap cap; // as the probe had: the same path through HDF5
            done.merge(read_completed_cases(path.string()));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ringscale: warning: --resume: ignoring '%s': %s\n",
                         terminal_text(path.string()).c_str(),
                         terminal_text(short_reason(e.what())).c_str());
        }
    }
    std::vector<std::string> where;
    for (const auto& k : keys) {
        auto it = done.find(k);
        where.push_back(it == done.end() ? std::string() : it->second);
    }
    return where;
}

} // namespace ringscale
