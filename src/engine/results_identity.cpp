#include "src/engine/results_identity.hpp"

#include "src/base/error.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <random>
#include <sys/stat.h>

namespace ringscale {

std::string new_launch_id() {
    std::random_device source; // /dev/urandom on Linux
    std::string id;
    for (int i = 0; i < 4; ++i)
        id += fmt::format("{:08x}", static_cast<std::uint32_t>(source()));
    return id;
}

file_identity identify_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw error(error_kind::io,
                    fmt::format("cannot stat '{}': {}", path, std::strerror(errno)));
    return {st.st_dev, st.st_ino};
}

std::string file_replaced(const std::string& path, const file_identity& expected) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return "the file is gone (was its directory deleted or moved?)";
    if (st.st_dev != expected.device || st.st_ino != expected.inode)
        return "the file was replaced by another one during the launch (not the file this "
               "launch wrote); it is not published as the results";
    return "";
}

} // namespace ringscale
