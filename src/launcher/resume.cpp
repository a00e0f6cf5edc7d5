#include "src/launcher/resume.hpp"

#include "src/h5.hpp"
#include "src/launcher/results_writer.hpp"
#include "src/parse.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>

namespace fs = std::filesystem;

namespace ringscale {

namespace {

bool is_results_name(const std::string& name) {
    auto ends = [&](const std::string& s) {
        return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    return ends(".h5") || ends(".h5.part");
}

// Completed (status ok) cases of one file: case_key -> "file:/cases/NNNN".
void collect_file(const fs::path& path, std::map<std::string, std::string>& done) {
    const h5::file f = h5::file::open_read(path.string());
    const h5::group root = f.root();
    if (!root.has_attr("schema") || root.attr_string("schema") != schema_version)
        throw std::runtime_error(fmt::format("not a {} file", schema_version));
    const h5::group cases = root.open_group("cases");
    for (const auto& name : cases.children()) {
        const h5::group c = cases.open_group(name);
        if (!c.exists("case_key") || !c.has_attr("status") || c.attr_string("status") != "ok")
            continue;
        done.emplace(c.read_string("case_key"), path.filename().string() + ":/cases/" + name);
    }
}

} // namespace

std::string case_key(const planned_case& pc, const launch_config& cfg, int world_size) {
    std::string text = fmt::format("job={}\nvariant={}\n", pc.plan.job, pc.plan.variant);
    for (const auto& [k, v] : pc.plan.values.values()) // a std::map: sorted, stable
        text += fmt::format("{}={}\n", k, v);
    text += fmt::format("world_size={}\nwarmup={}\niterations={}\ndevice={}\ncomm={}\nseed={}\n",
                        world_size, cfg.warmup, cfg.iters, cfg.device, cfg.comm, cfg.seed);
    return fmt::format("{:016x}", fnv1a64(text));
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
        try {
            collect_file(path, done);
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
