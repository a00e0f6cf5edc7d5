#include "kernels/parallel.hpp"

#include "kernels/threads.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ringscale::kernels {

namespace {

// One call at a time: the caller opens a job (a new generation), claims chunks alongside the
// workers it woke, then waits until every chunk is done and no worker is inside the job, and
// closes it. A worker that wakes after the job closed does nothing.
class pool {
  public:
    ~pool() {
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_stop = true;
            ++m_generation;
        }
        m_wake.notify_all();
        for (std::thread& t : m_threads)
            t.join();
    }

    void run(std::size_t chunks, int helpers, void (*fn)(const void*, std::size_t),
             const void* ctx) {
        grow(helpers);
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_fn = fn;
            m_ctx = ctx;
            m_chunks = chunks;
            m_next = 0;
            m_done = 0;
            m_helpers = helpers;
            m_open = true;
            ++m_generation;
        }
        m_wake.notify_all();
        claim();
        std::unique_lock<std::mutex> lock(m_mutex);
        m_finished.wait(lock, [&] { return m_done == m_chunks && m_inside == 0; });
        m_open = false;
    }

  private:
    void grow(int workers) {
        while (static_cast<int>(m_threads.size()) < workers) {
            const int id = static_cast<int>(m_threads.size()) + 1;
            // The generation it starts from is read here, before run() opens the next job.
            m_threads.emplace_back([this, id, gen = m_generation] { work(id, gen); });
        }
    }

    // Run chunks until none is left; the last one done wakes the caller.
    void claim() {
        for (std::size_t c = m_next++; c < m_chunks; c = m_next++) {
            m_fn(m_ctx, c);
            if (++m_done == m_chunks) {
                const std::lock_guard<std::mutex> lock(m_mutex);
                m_finished.notify_one();
            }
        }
    }

    void work(int id, std::uint64_t seen) {
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_wake.wait(lock, [&] { return m_generation != seen; });
                seen = m_generation;
                if (m_stop)
                    return;
                if (!m_open || id > m_helpers)
                    continue;
                ++m_inside;
            }
            claim();
            const std::lock_guard<std::mutex> lock(m_mutex);
            --m_inside;
            m_finished.notify_one();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake, m_finished;
    std::vector<std::thread> m_threads;
    void (*m_fn)(const void*, std::size_t) = nullptr;
    const void* m_ctx = nullptr;
    std::size_t m_chunks = 0;
    std::atomic<std::size_t> m_next{0}, m_done{0};
    std::uint64_t m_generation = 0;
    int m_helpers = 0;
    int m_inside = 0;
    bool m_open = false;
    bool m_stop = false;
};

pool& the_pool() {
    static pool p;
    return p;
}

} // namespace

std::size_t chunk_size(std::size_t n, std::size_t grain) {
    const std::size_t least = (n + max_chunks - 1) / max_chunks;
    return std::max<std::size_t>({1, grain, least});
}

std::size_t chunk_count(std::size_t n, std::size_t grain) {
    const std::size_t size = chunk_size(n, grain);
    return (n + size - 1) / size;
}

void run_chunks(std::size_t chunks, int threads, void (*chunk)(const void* ctx, std::size_t c),
                const void* ctx) {
    const int budget = std::max(1, threads > 0 ? threads : blas_threads());
    const auto helpers = static_cast<int>(
        std::min<std::size_t>(static_cast<std::size_t>(budget) - 1, chunks > 0 ? chunks - 1 : 0));
    if (helpers == 0) {
        for (std::size_t c = 0; c < chunks; ++c)
            chunk(ctx, c);
        return;
    }
    the_pool().run(chunks, helpers, chunk, ctx);
}

} // namespace ringscale::kernels
