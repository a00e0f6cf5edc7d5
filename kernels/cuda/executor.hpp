// The CUDA executor on the current GPU: one non-blocking compute stream, device memory counted
// by the CUDA runtime helpers, phases timed by pairs of events on the compute stream and
// resolved once per iteration, the event recorder of --profile and --trace (its phases spans
// too while it has a consumer), and the cuBLAS handles the dense layers use on that stream.
// Free of CUDA types.
#pragma once

#include "kernels/cuda/cublas_context.hpp"
#include "kernels/executor.hpp"
#include "kernels/kernels.hpp"

#include <memory>
#include <vector>

namespace ringscale::kernels::cuda {

class lowp_linear;
class event_pool;

class cuda_executor final : public executor {
  public:
    cuda_executor();
    ~cuda_executor() override;

    void* allocate(std::size_t bytes) override;
    void release(void* ptr, std::size_t bytes) noexcept override;
    void transfer(void* dst, const void* src, std::size_t bytes, copy_dir dir) override;
    void zero(void* dst, std::size_t bytes) override;
    std::uint64_t device_peak_bytes() const override;
    void reset_device_peak() override;

    void synchronize() override;
    mark record() override;
    void host_wait(const mark& m) override;
    void stream_wait(void* other, const mark& m) override;
    std::size_t begin_phase() override;
    void end_phase(phase_timer&, phase p, std::size_t token) override;
    void finish_iteration(phase_timer& timer) override;
    event_recorder* events() override { return m_recorder.get(); }

    /// The cuBLAS handle for GEMMs of `math`, bound to the compute stream; created on first
    /// use and kept while the executor lives (creating one costs milliseconds).
    cublas_context& blas(gemm_math math);
    /// The bf16, fp16 and fp8 GEMMs of the linear layers (cuBLASLt), made on first use.
    lowp_linear& lowp();

  private:
    struct pending_phase {
        phase p;
        std::size_t start, stop; // indices into m_events
    };
    // Record the next pooled timing event on the compute stream; returns its index.
    std::size_t record_timing_event();

    std::vector<void*> m_events; // cudaEvent_t, reused every iteration
    std::size_t m_used = 0;
    std::vector<pending_phase> m_pending;
    // --profile and --trace: the recorder over its event pool; each phase's span by its token.
    std::unique_ptr<event_pool> m_pool;
    std::unique_ptr<event_recorder> m_recorder;
    std::vector<std::size_t> m_phase_span;
    std::unique_ptr<cublas_context> m_blas[2]; // by gemm_math
    std::unique_ptr<lowp_linear> m_lowp;
};

/// `exec` as the CUDA executor it is (config_error otherwise).
cuda_executor& as_cuda(executor& exec);

} // namespace ringscale::kernels::cuda
