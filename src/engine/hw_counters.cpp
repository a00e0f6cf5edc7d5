#include "src/engine/hw_counters.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <fmt/format.h>
#include <limits>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ringscale {

namespace {

/// A user-space hardware counter of `config` on thread `tid`, inherited by its new threads;
/// -1 with errno set when the kernel refuses.
int open_counter(int tid, std::uint64_t config) {
    perf_event_attr attr{};
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof(attr);
    attr.config = config;
    attr.inherit = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, 0));
}

double sum_of(const std::vector<int>& fds) {
    double total = 0;
    for (const int fd : fds) {
        std::uint64_t v = 0;
        if (::read(fd, &v, sizeof(v)) != static_cast<ssize_t>(sizeof(v)))
            return std::numeric_limits<double>::quiet_NaN();
        total += static_cast<double>(v);
    }
    return total;
}

} // namespace

std::vector<int> process_threads() {
    std::vector<int> tids;
    if (DIR* d = opendir("/proc/self/task")) {
        while (const dirent* e = readdir(d)) {
            char* end = nullptr;
            const long tid = std::strtol(e->d_name, &end, 10);
            if (end != e->d_name && *end == '\0' && tid > 0)
                tids.push_back(static_cast<int>(tid));
        }
        closedir(d);
    }
    if (tids.empty())
        tids.push_back(static_cast<int>(syscall(SYS_gettid)));
    return tids;
}

hw_counters::hw_counters() {
    for (const int tid : process_threads()) {
        const int ins = open_counter(tid, PERF_COUNT_HW_INSTRUCTIONS);
        const int err_ins = errno;
        const int cyc = ins >= 0 ? open_counter(tid, PERF_COUNT_HW_CPU_CYCLES) : -1;
        if (ins < 0 || cyc < 0) {
            // A thread that ended since the listing is no reason to give up; anything else is.
            const int err = ins < 0 ? err_ins : errno;
            if (ins >= 0)
                ::close(ins);
            if (err == ESRCH)
                continue;
            m_why_not = fmt::format("perf_event_open: {}", std::strerror(err));
            close_all();
            return;
        }
        m_instructions.push_back(ins);
        m_cycles.push_back(cyc);
    }
    if (m_instructions.empty())
        m_why_not = "no thread to count";
}

hw_counters::~hw_counters() {
    close_all();
}

void hw_counters::close_all() {
    for (const int fd : m_instructions)
        ::close(fd);
    for (const int fd : m_cycles)
        ::close(fd);
    m_instructions.clear();
    m_cycles.clear();
}

std::string hw_counters::status() const {
    return supported() ? "instructions, cycles" : "not supported: " + m_why_not;
}

hw_count hw_counters::read() const {
    if (!supported())
        return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    return {sum_of(m_instructions), sum_of(m_cycles)};
}

} // namespace ringscale
