// ringscale-stats and --resume agree about which cases of a file count: for each
// ringscale/2 file given, the ok cases the reader keeps (analysis/reader.cpp) are exactly the
// cases --resume takes as completed (src/engine/resume.cpp). Both use one check
// (src/base/stored_case.hpp); this test fails if they ever drift apart.
//
// usage: resume_agrees FILE_OR_DIR...   (exit 0: every file agrees, 1: a file differs)
#include "analysis/reading/reader.hpp"
#include "src/base/error.hpp"
#include "src/engine/resume.hpp"

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>
#include <string>

namespace {

std::set<std::string> reader_cases(const std::string& path) {
    std::set<std::string> out;
    try {
        for (const auto& c : ringscale::analysis::read_results_file(path))
            if (c.ok())
                out.insert(c.group);
    } catch (const ringscale::error&) {
    }
    return out;
}

std::set<std::string> resume_cases(const std::string& path) {
    std::set<std::string> out;
    try {
        for (const auto& [key, where] : ringscale::read_completed_cases(path))
            out.insert(where.substr(where.rfind('/') + 1));
    } catch (const std::exception&) {
    }
    return out;
}

} // namespace

int main(int argc, char** argv) {
    int differ = 0, files = 0;
    for (int i = 1; i < argc; ++i)
        for (const auto& e : std::filesystem::directory_iterator(argv[i])) {
            if (e.path().extension() != ".h5")
                continue;
            ++files;
            const auto a = reader_cases(e.path()), b = resume_cases(e.path());
            if (a == b)
                continue;
            ++differ;
            std::printf("%s: ringscale-stats uses {%s}, --resume takes {%s}\n", e.path().c_str(),
                        fmt::format("{}", fmt::join(a, ",")).c_str(),
                        fmt::format("{}", fmt::join(b, ",")).c_str());
        }
    std::printf("resume_agrees: %d files, %d disagree\n", files, differ);
    return differ == 0 && files > 0 ? 0 : 1;
}
