// Limits for a disposable child that reads a possibly damaged results file. HDF5
// 1.10 can crash, hang or ask for absurd memory on a byte-flipped file, and nothing around
// the C call can catch that; a child that reads the file first, under a memory and time cap,
// can. Shared by ringscale-stats' forked probe (analysis/reading/file_probe.hpp) and the launcher's
// spawned --resume probe (src/engine/results_probe.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace ringscale {

/// Limits for one probing child.
struct child_limits {
    std::uint64_t extra_bytes = 2ull << 30; ///< address space the read may add (2 GiB)
    unsigned seconds = 10; ///< wall-clock cap on the read (the fuzz harness allows 20 s in all)
};

/// In the child: cap its address space at its current size + `limits.extra_bytes` and arm
/// SIGALRM after `limits.seconds`.
void apply_child_limits(const child_limits& limits);

/// The child's memory cap, held by the parent while it reads the same file in-process after
/// the child ended normally: HDF5's path on a damaged file can depend on whether a
/// huge allocation succeeds, so a read that failed cleanly in the capped child could crash an
/// uncapped parent. Lowers the soft RLIMIT_AS to the current size + `limits.extra_bytes`
/// (never raises it) and restores it on destruction. Not thread-safe: single-threaded readers.
class scoped_memory_cap {
  public:
    explicit scoped_memory_cap(const child_limits& limits = {});
    ~scoped_memory_cap();
    scoped_memory_cap(const scoped_memory_cap&) = delete;
    scoped_memory_cap& operator=(const scoped_memory_cap&) = delete;

  private:
    std::uint64_t m_soft = 0;
    bool m_set = false;
};

/// One line for a child killed by signal `sig` under `limits`: "reading it took longer than
/// N s" (SIGALRM) or "reading it crashed the HDF5 library (SIGSEGV): the file is damaged".
std::string child_signal_reason(int sig, const child_limits& limits);

/// One line for a child whose read ran out of memory under `limits`.
std::string child_memory_reason(const child_limits& limits);

} // namespace ringscale
