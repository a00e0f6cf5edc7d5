// A typed buffer in an executor's memory: tracked host memory on the CPU, device memory on
// CUDA. Move-only; freed through the executor it came from. Also the row positions the
// attention kernels take, kept on an executor.
#pragma once

#include "kernels/executor.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ringscale::kernels {

template <class T>
class dev_buffer {
  public:
    dev_buffer() = default;
    /// `count` uninitialised elements on `exec`, which must outlive the buffer.
    dev_buffer(executor& exec, std::size_t count) { allocate(exec, count); }
    /// A copy of `host` on `exec` (blocking).
    dev_buffer(executor& exec, const std::vector<T>& host) {
        allocate(exec, host.size());
        upload(host.data(), host.size());
    }
    ~dev_buffer() { reset(); }
    dev_buffer(const dev_buffer&) = delete;
    dev_buffer& operator=(const dev_buffer&) = delete;
    dev_buffer(dev_buffer&& other) noexcept
        : m_exec(std::exchange(other.m_exec, nullptr)),
          m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}
    dev_buffer& operator=(dev_buffer&& other) noexcept {
        if (this != &other) {
            reset();
            m_exec = std::exchange(other.m_exec, nullptr);
            m_data = std::exchange(other.m_data, nullptr);
            m_size = std::exchange(other.m_size, 0);
        }
        return *this;
    }

    /// Replace the contents with `count` uninitialised elements on `exec`.
    void allocate(executor& exec, std::size_t count) {
        reset();
        m_data = static_cast<T*>(exec.allocate(count * sizeof(T)));
        m_exec = &exec;
        m_size = count;
    }
    /// Free the memory; the buffer becomes empty.
    void reset() noexcept {
        if (m_exec)
            m_exec->release(m_data, m_size * sizeof(T));
        m_exec = nullptr;
        m_data = nullptr;
        m_size = 0;
    }

    T* data() { return m_data; }
    const T* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    std::size_t bytes() const { return m_size * sizeof(T); }
    bool empty() const { return m_size == 0; }

    /// Copy `count` <= size() elements from host memory to the start (blocking).
    void upload(const T* host, std::size_t count) {
        m_exec->upload(m_data, host, checked(count) * sizeof(T));
    }
    /// The first `count` elements (all when count is size()) as a host vector (blocking).
    std::vector<T> download(std::size_t count) const {
        std::vector<T> host(checked(count));
        if (count > 0)
            m_exec->download(host.data(), m_data, count * sizeof(T));
        return host;
    }
    std::vector<T> download() const { return download(m_size); }

  private:
    std::size_t checked(std::size_t count) const {
        if (count > m_size)
            throw_overflow(count, m_size);
        return count;
    }
    [[noreturn]] static void throw_overflow(std::size_t count, std::size_t size);

    executor* m_exec = nullptr;
    T* m_data = nullptr;
    std::size_t m_size = 0;
};

/// Throws config_error: a copy of `count` elements exceeds a buffer of `size`.
[[noreturn]] void throw_dev_buffer_overflow(std::size_t count, std::size_t size);

template <class T>
void dev_buffer<T>::throw_overflow(std::size_t count, std::size_t size) {
    throw_dev_buffer_overflow(count, size);
}

/// Positions of the rows of one attention operand: the host copy (always) and a copy in the
/// executor's memory (the same pointer on the CPU), `count` entries, sorted ascending.
/// `contiguous`: they are first, first + 1, ... (the CUDA kernels then skip position loads).
struct row_positions {
    const std::int64_t* host = nullptr;
    const std::int64_t* dev = nullptr;
    std::int64_t count = 0;
    bool contiguous = false;
};

/// Positions on `exec`: a copy of sorted host positions in the executor's memory, kept with
/// the host vector.
class dev_positions {
  public:
    dev_positions() = default;
    dev_positions(executor& exec, std::vector<std::int64_t> host);
    /// The view the attention kernels take; valid while this object lives.
    row_positions view() const;
    const std::vector<std::int64_t>& host() const { return m_host; }

  private:
    std::vector<std::int64_t> m_host;
    dev_buffer<std::int64_t> m_dev;
    bool m_contiguous = false;
};

} // namespace ringscale::kernels
