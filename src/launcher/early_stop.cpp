#include "src/launcher/early_stop.hpp"

#include "src/engine/guard.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace ringscale {

namespace {

std::atomic<int> g_rank{-1}; // -1: not known yet
static_assert(std::atomic<int>::is_always_lock_free, "the rank must be lock-free");

extern "C" void on_early_stop(int sig) {
    if (g_rank.load() <= 0) {
        const char* line = sig == SIGINT
                               ? "ringscale: SIGINT received before any case ran; stopping (no "
                                 "results file was written)\n"
                               : "ringscale: SIGTERM received before any case ran; stopping (no "
                                 "results file was written)\n";
        const ssize_t ignored = ::write(2, line, std::strlen(line));
        (void)ignored;
    }
    _exit(exit_interrupted);
}

} // namespace

void install_early_stop() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_early_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
}

void set_early_stop_rank(int rank) {
    g_rank.store(rank);
}

void uninstall_early_stop() {
    std::signal(SIGTERM, SIG_DFL);
    std::signal(SIGINT, SIG_DFL);
}

} // namespace ringscale
