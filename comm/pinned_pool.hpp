// Page-locked (pinned) host memory for staging device buffers through MPI, reused across
// calls: cudaMallocHost pins pages and costs far more than the copies it speeds up. Compiled
// only with CUDA. Free of CUDA types.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace ringscale::comm {

class pinned_pool;

/// One pinned block of at least `bytes()` bytes, returned to its pool when destroyed.
/// Move-only. Keeps its pool alive.
class pinned_block {
  public:
    pinned_block() = default;
    pinned_block(std::shared_ptr<pinned_pool> pool, void* data, std::size_t capacity)
        : m_pool(std::move(pool)), m_data(data), m_capacity(capacity) {}
    ~pinned_block();
    pinned_block(const pinned_block&) = delete;
    pinned_block& operator=(const pinned_block&) = delete;
    pinned_block(pinned_block&& other) noexcept;
    pinned_block& operator=(pinned_block&& other) noexcept;

    /// Host pointer (nullptr for an empty block); valid while this block lives.
    void* data() const { return m_data; }
    std::size_t capacity() const { return m_capacity; }

  private:
    void reset() noexcept;
    std::shared_ptr<pinned_pool> m_pool;
    void* m_data = nullptr;
    std::size_t m_capacity = 0;
};

/// A thread-safe free list of pinned blocks. Create with std::make_shared.
class pinned_pool : public std::enable_shared_from_this<pinned_pool> {
  public:
    /// Keep at most `max_free_blocks` idle blocks; beyond that the smallest are unpinned.
    explicit pinned_pool(std::size_t max_free_blocks = 8) : m_max_free(max_free_blocks) {}
    ~pinned_pool();
    pinned_pool(const pinned_pool&) = delete;
    pinned_pool& operator=(const pinned_pool&) = delete;

    /// A block of at least `bytes` (empty for 0): the smallest idle block that fits, else a
    /// new cudaMallocHost of `bytes` rounded up to a power of two (at least 4 KiB), so a
    /// sweep of growing messages reuses blocks. Throws a cuda error when pinning fails.
    pinned_block acquire(std::size_t bytes);

    /// Pinned bytes this pool holds, idle and lent out.
    std::size_t bytes_pinned() const;

  private:
    friend class pinned_block;
    void give_back(void* data, std::size_t capacity) noexcept;

    mutable std::mutex m_mutex;
    std::multimap<std::size_t, void*> m_free; // capacity -> block
    std::size_t m_max_free;
    std::size_t m_bytes_pinned = 0;
};

} // namespace ringscale::comm
