#include "src/base/child_limits.hpp"

#include <csignal>
#include <cstdio>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

namespace ringscale {

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

} // namespace

void apply_child_limits(const child_limits& limits) {
    rlimit as{};
    as.rlim_cur = as.rlim_max = virtual_bytes() + limits.extra_bytes;
    setrlimit(RLIMIT_AS, &as);
    alarm(limits.seconds);
}

scoped_memory_cap::scoped_memory_cap(const child_limits& limits) {
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) != 0)
        return;
    m_soft = as.rlim_cur;
    const std::uint64_t cap = virtual_bytes() + limits.extra_bytes;
    if (as.rlim_cur != RLIM_INFINITY && as.rlim_cur <= cap)
        return; // already as low: keep it
    as.rlim_cur = cap;
    m_set = setrlimit(RLIMIT_AS, &as) == 0;
}

scoped_memory_cap::~scoped_memory_cap() {
    rlimit as{};
    if (!m_set || getrlimit(RLIMIT_AS, &as) != 0)
        return;
    as.rlim_cur = m_soft;
    setrlimit(RLIMIT_AS, &as);
}

std::string child_signal_reason(int sig, const child_limits& limits) {
    if (sig == SIGALRM)
        return fmt::format("reading it took longer than {} s", limits.seconds);
    const char* name = sigabbrev_np(sig);
    return fmt::format("reading it crashed the HDF5 library (SIG{}): the file is damaged",
                       name ? name : std::to_string(sig).c_str());
}

std::string child_memory_reason(const child_limits& limits) {
    return fmt::format("needs more than {} GiB of memory to read (damaged sizes?)",
                       limits.extra_bytes >> 30);
}

} // namespace ringscale
