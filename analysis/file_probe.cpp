#include "file_probe.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <new>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ringscale::analysis {

namespace {

/// This process's current virtual size in bytes (0 when /proc is not there).
std::uint64_t virtual_bytes() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    unsigned long pages = 0;
    const int got = std::fscanf(f, "%lu", &pages);
    std::fclose(f);
    return got == 1 ? static_cast<std::uint64_t>(pages) * sysconf(_SC_PAGESIZE) : 0;
}

/// The child: cap memory and time, read, report through `fd`, never return.
[[noreturn]] void run_child(const std::function<void()>& read, const probe_limits& limits, int fd,
                            std::uint64_t base_bytes) {
    rlimit as{};
    as.rlim_cur = as.rlim_max = base_bytes + limits.extra_bytes;
    setrlimit(RLIMIT_AS, &as);
    alarm(limits.seconds);
    std::string why;
    try {
        read();
    } catch (const std::bad_alloc&) {
        why = fmt::format("needs more than {} GiB of memory to read (damaged sizes?)",
                          limits.extra_bytes >> 30);
    } catch (...) {
        // An ordinary error: reading in-process is safe and reports it the usual way.
    }
    if (!why.empty() && ::write(fd, why.data(), why.size()) < 0)
        _exit(3);
    _exit(why.empty() ? 0 : 1);
}

std::string signal_reason(int sig, const probe_limits& limits) {
    if (sig == SIGALRM)
        return fmt::format("reading it took longer than {} s", limits.seconds);
    const char* name = sigabbrev_np(sig);
    return fmt::format("reading it crashed the HDF5 library (SIG{}): the file is damaged",
                       name ? name : std::to_string(sig).c_str());
}

} // namespace

std::string probe_in_child(const std::function<void()>& read, const probe_limits& limits) {
    int fds[2];
    if (pipe(fds) != 0)
        return "";        // cannot probe: read in-process as before
    std::fflush(nullptr); // the child must not flush the parent's buffered output twice
    const std::uint64_t base = virtual_bytes();
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return "";
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(read, limits, fds[1], base);
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
        return signal_reason(WTERMSIG(status), limits);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return "";
    return message.empty() ? fmt::format("reading it failed (exit {})", WEXITSTATUS(status))
                           : message;
}

} // namespace ringscale::analysis
