// CUDA runtime helpers under comm, kernels and the engine (ringscale_cuda_runtime): a
// throwing check macro, device discovery and binding, counted device memory, a move-only
// device buffer that tracks peak bytes, and an event timer. The header names no CUDA type
// (streams are void*). Built only with CUDA: code compiled without it never calls these
// (kernels/gpu.hpp is the GPU's public face, with not-compiled hooks).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ringscale::cuda_runtime {

/// Out-of-line thrower for RINGSCALE_CUDA_CALL: error(error_kind::cuda) naming the call, the
/// rank, file and line, and cudaGetErrorString(code).
[[noreturn]] void throw_cuda_error(int code, const char* call, const char* file, int line);

} // namespace ringscale::cuda_runtime

/// Evaluate a CUDA runtime call once; throw a cuda error unless it returned cudaSuccess (0).
#define RINGSCALE_CUDA_CALL(expr)                                                                  \
    do {                                                                                           \
        const auto ringscale_cuda_status_ = (expr);                                                \
        if (static_cast<int>(ringscale_cuda_status_) != 0)                                         \
            ::ringscale::cuda_runtime::throw_cuda_error(static_cast<int>(ringscale_cuda_status_),  \
                                                        #expr, __FILE__, __LINE__);                \
    } while (0)

namespace ringscale::cuda_runtime {

/// Number of visible CUDA devices; 0 when there is no driver or device (or CUDA was not
/// built). Never throws.
int cuda_device_count();

/// Select this process's device: local_rank % device count. Throws config_error when no
/// device is visible, or when local_size exceeds the device count and !allow_sharing.
void bind_local_device(int local_rank, int local_size, bool allow_sharing);

/// Wait for all work on the current device (host-side, blocking).
void device_synchronize();

/// Bytes currently allocated through device_alloc by this process, and their high-water mark.
std::size_t device_bytes_current();
std::size_t device_bytes_peak();
/// Restart the high-water mark at the current allocation (e.g. between cases of a sweep).
void reset_device_bytes_peak();

/// cudaMalloc `bytes` (nullptr for 0); counted in device_bytes_*. Free with device_free.
void* device_alloc(std::size_t bytes);
/// cudaFree a pointer from device_alloc of `bytes`. Never throws; nullptr is a no-op.
void device_free(void* ptr, std::size_t bytes) noexcept;
/// Blocking copies of `bytes` between host memory and device memory: complete on return, so
/// work on any stream enqueued afterwards sees the data.
void copy_host_to_device(void* dst_device, const void* src_host, std::size_t bytes);
void copy_device_to_host(void* dst_host, const void* src_device, std::size_t bytes);

/// Owns `size()` elements of T in device memory (uninitialised). Move-only.
template <typename T>
class device_buffer {
  public:
    device_buffer() = default;
    explicit device_buffer(std::size_t count)
        : m_data(static_cast<T*>(device_alloc(count * sizeof(T)))), m_size(count) {}
    /// A device copy of host data.
    explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) {
        copy_from_host(host.data(), host.size());
    }
    ~device_buffer() { device_free(m_data, m_size * sizeof(T)); }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    device_buffer(device_buffer&& other) noexcept
        : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}
    device_buffer& operator=(device_buffer&& other) noexcept {
        if (this != &other) {
            device_free(m_data, m_size * sizeof(T));
            m_data = std::exchange(other.m_data, nullptr);
            m_size = std::exchange(other.m_size, 0);
        }
        return *this;
    }

    /// Device pointer; valid while this buffer lives.
    T* data() { return m_data; }
    const T* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    std::size_t bytes() const { return m_size * sizeof(T); }

    /// Copy `count` <= size() elements from host `src` to the start of the buffer (blocking).
    void copy_from_host(const T* src, std::size_t count) {
        copy_host_to_device(m_data, src, checked(count) * sizeof(T));
    }
    /// Copy `count` <= size() elements from the buffer to host `dst` (blocking).
    void copy_to_host(T* dst, std::size_t count) const {
        copy_device_to_host(dst, m_data, checked(count) * sizeof(T));
    }
    /// The whole buffer as a host vector (blocking).
    std::vector<T> to_host() const {
        std::vector<T> host(m_size);
        copy_to_host(host.data(), m_size);
        return host;
    }

  private:
    std::size_t checked(std::size_t count) const;
    T* m_data = nullptr;
    std::size_t m_size = 0;
};

/// Throws config_error when a copy of `count` elements exceeds a buffer of `size`.
void check_copy_count(std::size_t count, std::size_t size);

template <typename T>
std::size_t device_buffer<T>::checked(std::size_t count) const {
    check_copy_count(count, m_size);
    return count;
}

/// Times GPU work on one stream with two CUDA events. Move-only.
class cuda_event_timer {
  public:
    cuda_event_timer();
    ~cuda_event_timer();
    cuda_event_timer(const cuda_event_timer&) = delete;
    cuda_event_timer& operator=(const cuda_event_timer&) = delete;
    cuda_event_timer(cuda_event_timer&& other) noexcept;
    cuda_event_timer& operator=(cuda_event_timer&& other) noexcept;

    /// Record the start / stop event on `stream` (a cudaStream_t; nullptr: default stream).
    void start(void* stream = nullptr);
    void stop(void* stream = nullptr);
    /// Seconds between start and stop; blocks until the stop event has completed.
    double elapsed_s() const;

  private:
    void* m_start = nullptr; // cudaEvent_t
    void* m_stop = nullptr;  // cudaEvent_t
};

} // namespace ringscale::cuda_runtime
