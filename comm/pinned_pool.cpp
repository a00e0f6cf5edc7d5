#include "comm/pinned_pool.hpp"

#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::comm {

namespace {

constexpr std::size_t min_block_bytes = 4096;

std::size_t round_up_pow2(std::size_t bytes) {
    std::size_t capacity = min_block_bytes;
    while (capacity < bytes) {
        if (capacity > (static_cast<std::size_t>(-1) >> 1))
            return bytes; // no larger power of two fits a size_t
        capacity <<= 1;
    }
    return capacity;
}

} // namespace

pinned_block::~pinned_block() {
    reset();
}

pinned_block::pinned_block(pinned_block&& other) noexcept
    : m_pool(std::move(other.m_pool)), m_data(std::exchange(other.m_data, nullptr)),
      m_capacity(std::exchange(other.m_capacity, 0)) {}

pinned_block& pinned_block::operator=(pinned_block&& other) noexcept {
    if (this != &other) {
        reset();
        m_pool = std::move(other.m_pool);
        m_data = std::exchange(other.m_data, nullptr);
        m_capacity = std::exchange(other.m_capacity, 0);
    }
    return *this;
}

void pinned_block::reset() noexcept {
    if (m_pool && m_data)
        m_pool->give_back(m_data, m_capacity);
    m_pool.reset();
    m_data = nullptr;
    m_capacity = 0;
}

pinned_pool::~pinned_pool() {
    // Every lent block holds a reference to the pool, so all blocks are idle by now.
    for (const auto& [capacity, data] : m_free)
        cudaFreeHost(data); // never throws; an error here is already sticky
}

pinned_block pinned_pool::acquire(std::size_t bytes) {
    if (bytes == 0)
        return {};
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        const auto it = m_free.lower_bound(bytes);
        if (it != m_free.end()) {
            const auto [capacity, data] = *it;
            m_free.erase(it);
            return pinned_block(shared_from_this(), data, capacity);
        }
    }
    const std::size_t capacity = round_up_pow2(bytes);
    void* data = nullptr;
    RINGSCALE_CUDA_CALL(cudaMallocHost(&data, capacity));
    std::lock_guard<std::mutex> lock(m_mutex);
    m_bytes_pinned += capacity;
    return pinned_block(shared_from_this(), data, capacity);
}

std::size_t pinned_pool::bytes_pinned() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_bytes_pinned;
}

void pinned_pool::give_back(void* data, std::size_t capacity) noexcept {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_free.emplace(capacity, data);
    while (m_free.size() > m_max_free) {
        const auto smallest = m_free.begin();
        cudaFreeHost(smallest->second);
        m_bytes_pinned -= smallest->first;
        m_free.erase(smallest);
    }
}

} // namespace ringscale::comm
