#include "src/engine/output_name.hpp"

#include "src/base/error.hpp"

#include <cerrno>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ringscale {

namespace {

constexpr int max_candidates = 1000;

bool taken(const std::string& final) {
    std::error_code ec;
    return fs::exists(final, ec) || fs::exists(final + ".part", ec);
}

} // namespace

std::string file_name_token(const std::string& text) {
    std::string out;
    for (const char c : text.substr(0, 64)) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '-' || c == '_';
        out += ok ? c : '_';
    }
    return out;
}

std::string numbered_path(const std::string& path, int i) {
    if (i == 0)
        return path;
    const fs::path p(path);
    return (p.parent_path() / fmt::format("{}_{}{}", p.stem().string(), i, p.extension().string()))
        .string();
}

std::pair<std::string, h5::file> reserve_results_file(const std::string& path, bool fixed_name) {
    for (int i = 0; i < (fixed_name ? 1 : max_candidates); ++i) {
        const std::string final = numbered_path(path, i);
        if (taken(final)) {
            if (fixed_name)
                throw config_error(fmt::format(
                    "--output: '{}' already exists (give a new name or a directory)", final));
            continue;
        }
        try {
            return {final, h5::file::create(final + ".part", /*exclusive=*/true)};
        } catch (const error&) {
            if (!taken(final)) // not lost to another launch: a real failure
                throw;
        }
    }
    throw error(error_kind::io,
                fmt::format("cannot find a free results file name near '{}' ({} tried)", path,
                            max_candidates));
}

std::string publish_results_file(const std::string& temp, const std::string& final) {
    // link() fails with EEXIST instead of replacing: a no-clobber rename on one filesystem.
    for (int i = 0; i < max_candidates; ++i) {
        const std::string target = numbered_path(final, i);
        if (::link(temp.c_str(), target.c_str()) == 0) {
            ::unlink(temp.c_str());
            return target;
        }
        if (errno != EEXIST)
            break;
    }
    std::error_code ec; // link not supported here (some network filesystems): plain rename
    fs::rename(temp, final, ec);
    if (ec)
        throw error(error_kind::io,
                    fmt::format("cannot rename '{}' to '{}': {}", temp, final, ec.message()));
    return final;
}

} // namespace ringscale
