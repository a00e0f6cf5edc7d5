// Host memory accounting: the bytes a job allocates itself (tracked allocator, high-water
// mark per case) and the process's resident set (kernel's VmHWM, resettable per case).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringscale {

/// Process-wide counters of bytes held in tracked buffers.
struct host_memory {
    /// High-water mark of the bytes held in tracked buffers since the last reset_peak().
    static std::uint64_t peak_bytes();
    /// Start a new high-water mark at the current level.
    static void reset_peak();
    static void on_alloc(std::uint64_t bytes);
    static void on_free(std::uint64_t bytes);
};

/// Peak resident set size of this process in bytes (VmHWM), 0 if unknown.
std::uint64_t peak_rss_bytes();
/// Reset the kernel's VmHWM to the current RSS (Linux clear_refs); false if not permitted.
bool reset_peak_rss();
/// Bytes of memory the kernel considers available (MemAvailable), 0 if unknown.
std::uint64_t available_host_bytes();

/// 64-byte aligned allocation counted in host_memory (out of line on purpose: keeps
/// GCC 12's -Wuse-after-free false positive on inlined vector code away).
void* tracked_alloc(std::size_t bytes);
void tracked_free(void* p, std::size_t bytes) noexcept;

/// std::allocator that reports to host_memory; 64-byte aligned for vector loads.
template <class T>
struct tracking_allocator {
    using value_type = T;
    tracking_allocator() = default;
    template <class U>
    tracking_allocator(const tracking_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(tracked_alloc(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { tracked_free(p, n * sizeof(T)); }
    template <class U>
    bool operator==(const tracking_allocator<U>&) const noexcept {
        return true;
    }
    template <class U>
    bool operator!=(const tracking_allocator<U>&) const noexcept {
        return false;
    }
};

/// A host buffer whose bytes count towards the job's peak_host_bytes.
template <class T>
using host_buffer = std::vector<T, tracking_allocator<T>>;

} // namespace ringscale
