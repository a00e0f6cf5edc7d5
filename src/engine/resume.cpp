#include "src/engine/resume.hpp"

#include "src/base/case_record.hpp"
#include "src/base/h5.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"
#include "src/engine/results_probe.hpp"
#include "src/engine/results_writer.hpp"

#include <algorithm>
#include <cmath>
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

// Whether a case's timings can be read back whole: a case whose datasets are missing, the
// wrong shape, or whose time_s is not finite and >= 0 is not completed, whatever its status
// says (it runs again).
bool timings_sound(const h5::group& c, results::case_record& rec, std::uint64_t max_bytes) {
    try {
        results::read_case_datasets(c, rec, max_bytes);
    } catch (const std::exception&) {
        return false;
    }
    if (rec.rows == 0 || rec.world == 0)
        return false;
    return std::all_of(rec.time_s.begin(), rec.time_s.end(),
                       [](double v) { return std::isfinite(v) && v >= 0; });
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
        const h5::group c = cases.open_group(name);
        results::case_record rec = results::read_case_attributes(c);
        if (rec.case_key.empty() || rec.status() != schema::status::ok)
            continue;
        if (!timings_sound(c, rec, ec ? UINT64_MAX : max_bytes)) {
            std::fprintf(stderr,
                         "ringscale: warning: --resume: %s:/cases/%s has unreadable timings; "
                         "it runs again\n",
                         path.filename().c_str(), name.c_str());
            continue;
        }
        done.emplace(rec.case_key, path.filename().string() + ":/cases/" + name);
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
                         path.c_str(), unsafe.c_str());
            continue;
        }
        try {
            done.merge(read_completed_cases(path.string()));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ringscale: warning: --resume: ignoring '%s': %s\n", path.c_str(),
                         e.what());
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
