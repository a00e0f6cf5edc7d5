// Which blocking communication the calling process is waiting in, and since when. The
// communicators mark each blocking call; the launcher's watchdog thread reads the mark to
// abort a job whose peer died or hangs instead of waiting forever.
#pragma once

#include <atomic>

namespace ringscale::comm {

/// The blocking operation in progress (nullptr: none) and when it began (now_s() seconds).
struct blocking_state {
    std::atomic<const char*> op{nullptr};
    std::atomic<double> since_s{0};
};

/// This process's state. Written by the thread that communicates, read by any thread.
blocking_state& current_blocking();

/// RAII: marks the enclosing scope as blocked in `op` (a string literal). A nested scope
/// keeps the outer mark, so the watchdog sees the operation the caller asked for.
class blocking_scope {
  public:
    explicit blocking_scope(const char* op);
    ~blocking_scope();
    blocking_scope(const blocking_scope&) = delete;
    blocking_scope& operator=(const blocking_scope&) = delete;

  private:
    bool m_owner = false;
};

} // namespace ringscale::comm
