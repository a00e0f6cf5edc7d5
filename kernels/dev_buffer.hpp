// A typed buffer in a kernels::device's memory: tracked host memory on the CPU, device
// memory on CUDA. Move-only; freed through the device it came from.
#pragma once

#include "kernels/device.hpp"

#include <cstddef>
#include <utility>
#include <vector>

namespace ringscale::kernels {

template <class T>
class dev_buffer {
  public:
    dev_buffer() = default;
    /// `count` uninitialised elements on `dev`, which must outlive the buffer.
    dev_buffer(device& dev, std::size_t count) { allocate(dev, count); }
    /// A copy of `host` on `dev` (blocking).
    dev_buffer(device& dev, const std::vector<T>& host) {
        allocate(dev, host.size());
        upload(host.data(), host.size());
    }
    ~dev_buffer() { reset(); }
    dev_buffer(const dev_buffer&) = delete;
    dev_buffer& operator=(const dev_buffer&) = delete;
    dev_buffer(dev_buffer&& other) noexcept
        : m_dev(std::exchange(other.m_dev, nullptr)), m_data(std::exchange(other.m_data, nullptr)),
          m_size(std::exchange(other.m_size, 0)) {}
    dev_buffer& operator=(dev_buffer&& other) noexcept {
        if (this != &other) {
            reset();
            m_dev = std::exchange(other.m_dev, nullptr);
            m_data = std::exchange(other.m_data, nullptr);
            m_size = std::exchange(other.m_size, 0);
        }
        return *this;
    }

    /// Replace the contents with `count` uninitialised elements on `dev`.
    void allocate(device& dev, std::size_t count) {
        reset();
        m_data = static_cast<T*>(dev.allocate(count * sizeof(T)));
        m_dev = &dev;
        m_size = count;
    }
    /// Free the memory; the buffer becomes empty.
    void reset() noexcept {
        if (m_dev)
            m_dev->release(m_data, m_size * sizeof(T));
        m_dev = nullptr;
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
        m_dev->upload(m_data, host, checked(count) * sizeof(T));
    }
    /// The first `count` elements (all when count is size()) as a host vector (blocking).
    std::vector<T> download(std::size_t count) const {
        std::vector<T> host(checked(count));
        if (count > 0)
            m_dev->download(host.data(), m_data, count * sizeof(T));
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

    device* m_dev = nullptr;
    T* m_data = nullptr;
    std::size_t m_size = 0;
};

/// Throws config_error: a copy of `count` elements exceeds a buffer of `size`.
[[noreturn]] void throw_dev_buffer_overflow(std::size_t count, std::size_t size);

template <class T>
void dev_buffer<T>::throw_overflow(std::size_t count, std::size_t size) {
    throw_dev_buffer_overflow(count, size);
}

/// Positions on `dev`: a device copy of sorted host positions, kept with the host vector.
class dev_positions {
  public:
    dev_positions() = default;
    dev_positions(device& dev, std::vector<std::int64_t> host);
    /// The view the attention calls take; valid while this object lives.
    row_positions view() const;
    const std::vector<std::int64_t>& host() const { return m_host; }

  private:
    std::vector<std::int64_t> m_host;
    dev_buffer<std::int64_t> m_dev;
    bool m_contiguous = false;
};

} // namespace ringscale::kernels
