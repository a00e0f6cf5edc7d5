#include "kernels/cuda/event_pool.hpp"

#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <cuda_runtime.h>
#include <fmt/format.h>

namespace ringscale::kernels::cuda {

namespace {

cudaEvent_t as_event(void* e) {
    return static_cast<cudaEvent_t>(e);
}

} // namespace

event_pool::event_pool(void* compute_stream, std::size_t max_events)
    : m_compute(compute_stream), m_max(max_events) {}

event_pool::~event_pool() {
    for (void* e : m_events)
        cudaEventDestroy(as_event(e)); // never throws from a destructor
}

void event_pool::record(std::size_t slot, void* stream) {
    if (slot >= m_max)
        throw error(error_kind::cuda,
                    fmt::format("event slot {} beyond the pool's {} events", slot, m_max));
    while (m_events.size() <= slot) {
        cudaEvent_t e = nullptr;
        RINGSCALE_CUDA_CALL(cudaEventCreate(&e));
        m_events.push_back(e);
    }
    void* s = stream ? stream : m_compute;
    RINGSCALE_CUDA_CALL(cudaEventRecord(as_event(m_events[slot]), static_cast<cudaStream_t>(s)));
    if (std::find(m_last.begin(), m_last.end(), s) == m_last.end())
        m_last.push_back(s);
}

std::vector<double> event_pool::elapsed_s(std::size_t n) {
    if (n > m_events.size())
        throw error(error_kind::cuda,
                    fmt::format("{} events read, {} recorded", n, m_events.size()));
    // The one host sync: every stream an event went to has reached its last event.
    for (void* s : m_last)
        RINGSCALE_CUDA_CALL(cudaStreamSynchronize(static_cast<cudaStream_t>(s)));
    m_last.clear();
    std::vector<double> t(n, 0.0);
    for (std::size_t i = 1; i < n; ++i) {
        float ms = 0;
        RINGSCALE_CUDA_CALL(
            cudaEventElapsedTime(&ms, as_event(m_events[0]), as_event(m_events[i])));
        t[i] = static_cast<double>(ms) * 1e-3;
    }
    return t;
}

} // namespace ringscale::kernels::cuda
