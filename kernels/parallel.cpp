#include "kernels/parallel.hpp"

#include "kernels/threads.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ringscale::kernels {

namespace {

// Workers wait for a new generation, run their range, and count down `m_pending`.
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

    void run(int ranges, void (*range)(const void*, int), const void* ctx) {
        grow(ranges - 1);
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_fn = range;
            m_ctx = ctx;
            m_active = ranges - 1;
            m_pending = ranges - 1;
            ++m_generation;
        }
        m_wake.notify_all();
        range(ctx, 0);
        std::unique_lock<std::mutex> lock(m_mutex);
        m_done.wait(lock, [&] { return m_pending == 0; });
        m_fn = nullptr;
    }

  private:
    void grow(int workers) {
        while (static_cast<int>(m_threads.size()) < workers) {
            const int id = static_cast<int>(m_threads.size()) + 1;
            // The generation it starts from is read here, before run() starts the next one.
            m_threads.emplace_back([this, id, gen = m_generation] { work(id, gen); });
        }
    }

    void work(int id, std::uint64_t seen) {
        for (;;) {
            void (*fn)(const void*, int) = nullptr;
            const void* ctx = nullptr;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_wake.wait(lock, [&] { return m_generation != seen; });
                seen = m_generation;
                if (m_stop)
                    return;
                if (id > m_active)
                    continue;
                fn = m_fn;
                ctx = m_ctx;
            }
            fn(ctx, id);
            const std::lock_guard<std::mutex> lock(m_mutex);
            if (--m_pending == 0)
                m_done.notify_one();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::vector<std::thread> m_threads;
    void (*m_fn)(const void*, int) = nullptr;
    const void* m_ctx = nullptr;
    std::uint64_t m_generation = 0;
    int m_active = 0;
    int m_pending = 0;
    bool m_stop = false;
};

pool& the_pool() {
    static pool p;
    return p;
}

} // namespace

int parallel_ranges(std::size_t n, std::size_t grain) {
    const std::size_t by_size = n / std::max<std::size_t>(1, grain);
    const auto threads = static_cast<std::size_t>(std::max(1, blas_threads()));
    return static_cast<int>(std::max<std::size_t>(1, std::min(threads, by_size)));
}

void run_ranges(int ranges, void (*range)(const void* ctx, int i), const void* ctx) {
    the_pool().run(ranges, range, ctx);
}

} // namespace ringscale::kernels
