#include "whole_file.hpp"

#include "error.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <streambuf>
#include <sys/stat.h>
#include <unistd.h>

namespace ringscale {

namespace {

namespace fs = std::filesystem;

/// A stream buffer over a file descriptor that remembers the first write error.
class fd_buffer : public std::streambuf {
  public:
    explicit fd_buffer(int fd) : m_fd(fd) { setp(m_buf, m_buf + sizeof m_buf); }
    int error() const { return m_errno; }

  protected:
    int_type overflow(int_type ch) override {
        if (!drain())
            return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(ch);
            pbump(1);
        }
        return traits_type::not_eof(ch);
    }
    int sync() override { return drain() ? 0 : -1; }

  private:
    bool drain() {
        const char* p = pbase();
        while (p < pptr() && m_errno == 0) {
            const ssize_t n = ::write(m_fd, p, static_cast<std::size_t>(pptr() - p));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                m_errno = n < 0 ? errno : EIO;
            else
                p += n;
        }
        setp(m_buf, m_buf + sizeof m_buf);
        return m_errno == 0;
    }
    int m_fd;
    int m_errno = 0;
    char m_buf[1 << 16];
};

[[noreturn]] void io_failure(const std::string& path, int err) {
    throw error(error_kind::io, fmt::format("cannot write {}: {}", path, std::strerror(err)));
}

mode_t file_mode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

/// The directory a path's file goes into, and the file's name (io error without one).
std::pair<std::string, std::string> split_path(const std::string& path) {
    const fs::path p(path);
    const std::string name = p.filename().string();
    if (name.empty() || name == "." || name == "..")
        throw error(error_kind::io, fmt::format("cannot write {}: it names a directory", path));
    const std::string dir = p.parent_path().string();
    return {dir.empty() ? "." : dir, name};
}

} // namespace

void write_whole_file(const std::string& path, const std::function<void(std::ostream&)>& body) {
    static const bool ignore_xfsz = [] { // a file-size limit: EFBIG from write(), not a kill
        std::signal(SIGXFSZ, SIG_IGN);
        return true;
    }();
    (void)ignore_xfsz;
    const auto [dir, name] = split_path(path);
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(path, ec)))
        throw error(error_kind::io, fmt::format("cannot write {}: it is a directory", path));
    std::string temp = dir + "/." + name + ".XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) {
        const int err = errno;
        if (!fs::is_directory(dir, ec))
            throw error(error_kind::io, fmt::format("cannot write {}: directory {} does not exist "
                                                    "(create it first)",
                                                    path, dir));
        io_failure(path, err);
    }
    int err = ::fchmod(fd, file_mode()) == 0 ? 0 : errno;
    try {
        fd_buffer buf(fd);
        std::ostream out(&buf);
        if (err == 0) {
            body(out);
            out.flush();
            err = buf.error() ? buf.error() : (out ? 0 : EIO);
        }
    } catch (...) {
        ::close(fd);
        ::unlink(temp.c_str());
        throw;
    }
    if (::close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && ::rename(temp.c_str(), path.c_str()) != 0)
        err = errno;
    if (err != 0) {
        ::unlink(temp.c_str());
        io_failure(path, err);
    }
}

staged_files::staged_files(const std::string& dir) : m_dir(dir) {
    std::string stage = dir + "/.ringscale-staging.XXXXXX";
    if (!::mkdtemp(stage.data()))
        throw error(error_kind::io,
                    fmt::format("cannot write into {}: {}", dir, std::strerror(errno)));
    m_stage = stage;
}

staged_files::~staged_files() {
    std::error_code ec;
    fs::remove_all(m_stage, ec); // never follows a link: only our own files are in it
}

namespace {

/// Undo the first `moved` renames of publish(): each new file back into the staging
/// directory, each file it replaced back from `old_dir`. Best effort (errors ignored): it runs
/// after a failure, which is what the caller reports.
void roll_back(const std::string& dir, const std::string& stage, const std::string& old_dir,
               const std::vector<std::string>& names, std::size_t moved,
               const std::vector<bool>& replaced) {
    for (std::size_t i = moved; i-- > 0;) {
        const std::string& n = names[i];
        (void)::rename((dir + "/" + n).c_str(), (stage + "/" + n).c_str());
        if (replaced[i])
            (void)::rename((old_dir + "/" + n).c_str(), (dir + "/" + n).c_str());
    }
}

} // namespace

std::vector<std::string> staged_files::publish(const std::string& last) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(m_stage, ec))
        if (e.is_regular_file(ec) && !e.is_symlink(ec))
            names.push_back(e.path().filename().string());
    if (ec)
        throw error(error_kind::io, fmt::format("cannot list {}: {}", m_stage, ec.message()));
    std::sort(names.begin(), names.end());
    const auto at = std::find(names.begin(), names.end(), last);
    if (at != names.end())
        std::rotate(at, at + 1, names.end());
    // Every destination checked before the first move: a directory in the way of one file
    // refuses the whole set, and `dir` stays as it was.
    for (const std::string& n : names)
        if (fs::is_directory(fs::symlink_status(m_dir + "/" + n, ec)))
            throw error(error_kind::io,
                        fmt::format("cannot write {}/{}: it is a directory", m_dir, n));
    // A file each move replaces is kept aside until all moved, so a failed move puts back
    // what was there.
    const std::string old_dir = m_stage + "/.replaced";
    if (::mkdir(old_dir.c_str(), 0700) != 0)
        io_failure(old_dir, errno);
    std::vector<bool> replaced(names.size(), false);
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string dest = m_dir + "/" + names[i];
        int err = 0;
        if (fs::exists(fs::symlink_status(dest, ec))) {
            if (::rename(dest.c_str(), (old_dir + "/" + names[i]).c_str()) != 0)
                err = errno;
            replaced[i] = err == 0;
        }
        if (err == 0 && ::rename((m_stage + "/" + names[i]).c_str(), dest.c_str()) != 0)
            err = errno;
        if (err != 0) {
            if (replaced[i]) // this one's old file first, then the earlier moves
                (void)::rename((old_dir + "/" + names[i]).c_str(), dest.c_str());
            roll_back(m_dir, m_stage, old_dir, names, i, replaced);
            io_failure(dest, err);
        }
    }
    fs::remove_all(m_stage, ec);
    return names;
}

} // namespace ringscale
