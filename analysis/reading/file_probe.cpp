#include "file_probe.hpp"

#include <cerrno>
#include <cstdio>
#include <fmt/format.h>
#include <hdf5.h>
#include <new>
#include <sys/wait.h>
#include <unistd.h>

namespace ringscale::analysis {

namespace {

/// The child: cap memory and time, read, report through `fd`, never return.
[[noreturn]] void run_child(const std::function<void()>& read, const probe_limits& limits, int fd) {
    apply_child_limits(limits);
    std::string why;
    try {
        read();
    } catch (const std::bad_alloc&) {
        why = child_memory_reason(limits);
    } catch (...) {
        // An ordinary error: reading in-process is safe and reports it the usual way.
    }
    // HDF5 1.10 can write over freed or neighbouring heap blocks on a damaged file without
    // crashing at once; the damage surfaces only when the block goes back to malloc, and
    // HDF5 keeps freed blocks on its own free lists until the library closes (at exit). A
    // child that _exit()s right after the read would end normally and the parent, reading
    // the same file the same way, would abort later on an unrelated file or at exit. Closing
    // the library here hands every block back to malloc, so that damage kills the child.
    if (H5close() < 0)
        _exit(4);
    if (!why.empty() && ::write(fd, why.data(), why.size()) < 0)
        _exit(3);
    _exit(why.empty() ? 0 : 1);
}

} // namespace

std::string probe_in_child(const std::function<void()>& read, const probe_limits& limits) {
    int fds[2];
    if (pipe(fds) != 0)
        return "";        // cannot probe: read in-process as before
    std::fflush(nullptr); // the child must not flush the parent's buffered output twice
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return "";
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(read, limits, fds[1]);
    }
    close(fds[1]);
    std::string message;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        message.append(buf, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        return child_signal_reason(WTERMSIG(status), limits);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return "";
    return message.empty() ? fmt::format("reading it failed (exit {})", WEXITSTATUS(status))
                           : message;
}

} // namespace ringscale::analysis
