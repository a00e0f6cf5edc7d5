#include "src/launcher/crash_report.hpp"

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <execinfo.h>
#include <initializer_list>
#include <unistd.h>

namespace ringscale {

namespace {

constexpr int k_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

std::atomic<int> g_stage{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stage must be lock-free");

char g_task[32] = "?"; // written once, before the handler is installed

// Async-signal-safe text: a fixed buffer appended to, then one write.
struct line {
    char text[256];
    std::size_t n = 0;
    void put(const char* s) {
        while (*s && n + 1 < sizeof(text))
            text[n++] = *s++;
    }
    void put_number(std::uintptr_t v, unsigned base) {
        char digits[2 * sizeof(v) + 1];
        int k = 0;
        do {
            digits[k++] = "0123456789abcdef"[v % base];
            v /= base;
        } while (v != 0);
        while (k > 0 && n + 1 < sizeof(text))
            text[n++] = digits[--k];
    }
    void write_to(int fd) const {
        const ssize_t ignored = ::write(fd, text, n);
        (void)ignored;
    }
};

const char* signal_name(int sig) {
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGILL:
        return "SIGILL";
    case SIGFPE:
        return "SIGFPE";
    case SIGABRT:
        return "SIGABRT";
    default:
        return "signal";
    }
}

const char* stage_text(launch_stage stage) {
    switch (stage) {
    case launch_stage::mpi_init:
        return "inside MPI_Init";
    case launch_stage::running:
        return "while running";
    default:
        return "at start-up, before MPI_Init";
    }
}

/// A rank as the launcher's environment gives it: 1-9 digits, else not used (the line goes to
/// a terminal, and an environment is the user's to set).
bool is_rank(const char* v) {
    const std::size_t n = std::strlen(v);
    return n > 0 && n < 10 && std::strspn(v, "0123456789") == n;
}

extern "C" void on_fault(int sig, siginfo_t* info, void*) {
    line l;
    l.put("ringscale: task ");
    l.put(g_task);
    l.put(" (pid ");
    l.put_number(static_cast<std::uintptr_t>(::getpid()), 10);
    l.put(") died of ");
    l.put(signal_name(sig));
    const bool sent = !info || info->si_code <= 0; // by kill, raise or abort: no fault address
    if (!sent) {
        l.put(" at address 0x");
        l.put_number(reinterpret_cast<std::uintptr_t>(info->si_addr), 16);
    } else if (info && info->si_pid != ::getpid()) {
        l.put(" sent by pid ");
        l.put_number(static_cast<std::uintptr_t>(info->si_pid), 10);
    }
    l.put(" ");
    l.put(stage_text(static_cast<launch_stage>(g_stage.load())));
    l.put("; its stack:\n");
    l.write_to(2);
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
    // End by the same signal: the default action, raised again on return from the handler.
    std::signal(sig, SIG_DFL);
    if (sent) // a fault strikes again on return; a sent signal is sent again
        ::raise(sig);
}

} // namespace

bool crash_report_installs() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return false; // the sanitizer's own fault handler reports with more (shadow memory, threads)
#else
    return true;
#endif
}

void install_crash_report() {
    if (!crash_report_installs())
        return;
    for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"})
        if (const char* v = std::getenv(var); v && is_rank(v)) {
            std::strcpy(g_task, v);
            break;
        }
    // backtrace() loads libgcc on its first call: do that now, not inside the handler.
    void* warm[1];
    (void)backtrace(warm, 1);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int sig : k_signals)
        sigaction(sig, &sa, nullptr);
}

void set_crash_stage(launch_stage stage) {
    g_stage.store(static_cast<int>(stage));
}

} // namespace ringscale
