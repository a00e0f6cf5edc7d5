// The GPU's event_clock (kernels/event_recorder.hpp): a bounded pool of timing cudaEvents,
// created on first use and reused every iteration, recorded on the compute stream or on the
// stream a span names, and read after one host sync by cudaEventElapsedTime against event 0
// (the iteration's start). Free of CUDA types.
#pragma once

#include "kernels/event_recorder.hpp"

#include <cstddef>
#include <vector>

namespace ringscale::kernels::cuda {

class event_pool final : public event_clock {
  public:
    /// Events recorded with a null stream go to `compute_stream` (a cudaStream_t, not owned).
    /// At most `max_events` events.
    event_pool(void* compute_stream, std::size_t max_events);
    ~event_pool() override;
    event_pool(const event_pool&) = delete;
    event_pool& operator=(const event_pool&) = delete;

    void record(std::size_t slot, void* stream) override;
    std::vector<double> elapsed_s(std::size_t n) override;
    /// Events created so far (never more than max_events).
    std::size_t created() const { return m_events.size(); }

  private:
    void* m_compute;
    std::size_t m_max;
    std::vector<void*> m_events; // cudaEvent_t
    std::vector<void*> m_last;   // streams recorded on since the last read
};

} // namespace ringscale::kernels::cuda
