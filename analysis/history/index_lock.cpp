#include "index_lock.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <thread>
#include <unistd.h>

namespace ringscale::analysis::history {

namespace {

std::string directory_of(const std::string& path) {
    const std::string dir = std::filesystem::path(path).parent_path().string();
    return dir.empty() ? "." : dir;
}

bool group_writable_dir(const std::string& path) {
    struct stat st {};
    return ::stat(directory_of(path).c_str(), &st) == 0 && (st.st_mode & S_IWGRP);
}

/// The one line for an index that cannot be written where it lives.
[[noreturn]] void cannot_write(const std::string& index, int err) {
    throw config_error(fmt::format(
        "index '{}': cannot write in its directory ({}): the index lives beside the results by "
        "default; give --index FILE on a writable disk (e.g. --index "
        "$HOME/ringscale-history.sqlite)",
        terminal_text(index), std::strerror(err)));
}

/// "pid P on HOST since TIME", for the lock file's holder line.
std::string holder_line() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return fmt::format("pid {} on {} since {}", ::getpid(), host, when);
}

/// What the holder wrote in the lock file (at most a line), or "another process".
std::string read_holder(int fd) {
    char buf[300] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string s = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
    s = s.substr(0, s.find('\n'));
    return s.empty() ? "another process" : terminal_text(s).substr(0, 200);
}

} // namespace

void refuse_symlink(const std::string& path, const char* what) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        throw config_error(fmt::format("{} '{}' is a symbolic link: refused (a link in a shared "
                                       "directory could make this run write where it points)",
                                       what, terminal_text(path)));
}

void share_with_group(const std::string& path) {
    struct stat st {};
    if (group_writable_dir(path) && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        !(st.st_mode & S_IWGRP))
        ::chmod(path.c_str(), (st.st_mode & 07777) | S_IRGRP | S_IWGRP);
}

std::string network_filesystem(const std::string& dir) {
    struct statfs fs {};
    if (::statfs(dir.c_str(), &fs) != 0)
        return "";
    switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x6969UL:
        return "NFS";
    case 0x0BD00BD0UL:
        return "Lustre";
    case 0x47504653UL:
        return "GPFS";
    case 0xFF534D42UL:
    case 0xFE534D42UL:
        return "SMB";
    case 0x19830326UL:
        return "BeeGFS";
    case 0x65735546UL:
        return "FUSE";
    default:
        return "";
    }
}

index_lock::index_lock(const std::string& index, double wait_s,
                       const std::function<void(const std::string&)>& say) {
    const std::string lock = index + ".lock";
    for (const auto& [path, what] : {std::pair<std::string, const char*>{index, "index"},
                                     {index + "-journal", "index journal"},
                                     {index + "-wal", "index journal"},
                                     {lock, "index lock"}})
        refuse_symlink(path, what);
    const std::string dir = directory_of(index);
    if (::access(dir.c_str(), W_OK | X_OK) != 0 && errno != ENOENT)
        cannot_write(index, errno);
    m_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                  group_writable_dir(index) ? 0664 : 0644);
    if (m_fd < 0) {
        if (errno == ELOOP)
            refuse_symlink(lock, "index lock");
        if (errno == ENOENT)
            throw config_error(
                fmt::format("index '{}': its directory does not exist", terminal_text(index)));
        struct stat st {};
        if (errno == EISDIR || (::lstat(lock.c_str(), &st) == 0 && !S_ISREG(st.st_mode)))
            throw config_error(fmt::format(
                "index lock '{}' is {}, not a file: remove it, or give --index FILE elsewhere",
                terminal_text(lock),
                S_ISDIR(st.st_mode) || errno == EISDIR ? "a directory" : "not a regular file"));
        cannot_write(index, errno);
    }
    share_with_group(lock);
    if (const std::string net = network_filesystem(dir); !net.empty())
        say(fmt::format("index '{}' lies on {}, where SQLite's locking is not to be trusted: "
                        "give --index FILE on a local disk",
                        terminal_text(index), net));
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, wait_s));
    bool said = false;
    while (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK) {
            const int err = errno;
            ::close(m_fd);
            throw config_error(
                fmt::format("index lock '{}': {}", terminal_text(lock), std::strerror(err)));
        }
        const std::string holder = read_holder(m_fd);
        if (std::chrono::steady_clock::now() >= until) {
            ::close(m_fd);
            throw config_error(fmt::format("index '{}' is still in use by {} after {:g} s: try "
                                           "again later, or give a longer --index-wait",
                                           terminal_text(index), holder, wait_s));
        }
        if (!said)
            say(fmt::format("index '{}' is in use by {}: waiting up to {:g} s for it",
                            terminal_text(index), holder, wait_s));
        said = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const std::string line = holder_line() + "\n";
    if (::ftruncate(m_fd, 0) == 0) // who holds it, for a run that waits; best effort
        [[maybe_unused]]
        const ssize_t n = ::pwrite(m_fd, line.data(), line.size(), 0);
}

index_lock::~index_lock() {
    if (m_fd >= 0)
        ::close(m_fd); // releases the flock
}

} // namespace ringscale::analysis::history
