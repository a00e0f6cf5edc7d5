#include "text_file.hpp"

#include "error.hpp"
#include "parse.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ringscale {

namespace {

const char* file_kind(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/// Closes the descriptor on every path out.
struct fd_closer {
    int fd;
    ~fd_closer() { ::close(fd); }
};

} // namespace

std::string read_text_file(const std::string& path, std::uint64_t max_bytes,
                           const std::string& what) {
    const std::string name = fmt::format("{} '{}'", what, path);
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for ever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        throw config_error(fmt::format("{}: cannot open it: {}", name, std::strerror(errno)));
    const fd_closer closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw config_error(fmt::format("{}: cannot stat it: {}", name, std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
        throw config_error(fmt::format("{} is {}: give a regular file (e.g. an .ini file)", name,
                                       file_kind(st.st_mode)));
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
        throw config_error(fmt::format("{} is {}, more than the {} allowed", name,
                                       format_bytes(static_cast<double>(st.st_size)),
                                       format_bytes(static_cast<double>(max_bytes))));
    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw config_error(fmt::format("{}: cannot read it: {}", name, std::strerror(errno)));
        if (n == 0)
            return text;
        text.append(buf, static_cast<std::size_t>(n));
        // /proc files declare size 0 and may grow while read: the cap holds regardless.
        if (text.size() > max_bytes)
            throw config_error(fmt::format("{} is larger than the {} allowed", name,
                                           format_bytes(static_cast<double>(max_bytes))));
    }
}

} // namespace ringscale
