// The CUDA device (kernels/device.hpp) on the current GPU: one non-blocking compute stream,
// device memory counted by cuda_check's allocator, phases timed by pairs of events on the
// compute stream and resolved once per iteration, and the attention kernels of kernels/cuda.
#include "kernels/cuda/attention_bwd.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/rows.cuh"
#include "kernels/device.hpp"
#include "src/base/error.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <vector>

namespace ringscale::kernels {

namespace {

cudaEvent_t as_event(void* e) {
    return static_cast<cudaEvent_t>(e);
}

cuda::attn_dtype attn_type(elem e) {
    if (e == elem::f32)
        throw config_error("the CUDA attention kernels take bf16 or fp16 inputs, not fp32 "
                           "(use --dtype bf16 or fp16)");
    return e == elem::bf16 ? cuda::attn_dtype::bf16 : cuda::attn_dtype::fp16;
}

cuda::attention_positions positions(const row_positions& q, const row_positions& k) {
    cuda::attention_positions p;
    p.q_pos = q.contiguous ? nullptr : q.dev;
    p.k_pos = k.contiguous ? nullptr : k.dev;
    p.q_first = q.count > 0 ? q.host[0] : 0;
    p.k_first = k.count > 0 ? k.host[0] : 0;
    return p;
}

class cuda_device final : public device {
  public:
    cuda_device() {
        cudaStream_t s = nullptr;
        RINGSCALE_CUDA_CALL(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        m_stream = s;
    }
    ~cuda_device() override {
        cudaStreamSynchronize(m_stream); // never throws from a destructor
        for (void* e : m_events)
            cudaEventDestroy(as_event(e));
        cudaStreamDestroy(m_stream);
    }
    cuda_device(const cuda_device&) = delete;
    cuda_device& operator=(const cuda_device&) = delete;

    std::string name() const override { return "cuda"; }
    bool supports(elem e) const override { return e != elem::f32; }

    void* allocate(std::size_t bytes) override { return cuda::device_alloc(bytes); }
    void release(void* ptr, std::size_t bytes) noexcept override {
        if (ptr)
            cudaStreamSynchronize(m_stream); // queued work may still use it
        cuda::device_free(ptr, bytes);
    }
    void upload(void* dst, const void* src, std::size_t bytes) override {
        synchronize();
        cuda::copy_host_to_device(dst, src, bytes);
    }
    void download(void* dst, const void* src, std::size_t bytes) override {
        synchronize();
        cuda::copy_device_to_host(dst, src, bytes);
    }
    void copy(void* dst, const void* src, std::size_t bytes) override {
        if (bytes)
            RINGSCALE_CUDA_CALL(
                cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, m_stream));
    }
    void zero(void* dst, std::size_t bytes) override {
        if (bytes)
            RINGSCALE_CUDA_CALL(cudaMemsetAsync(dst, 0, bytes, m_stream));
    }
    void convert(elem e, std::size_t n, const float* src, void* dst) override {
        cuda::to_attn_dtype_cuda(attn_type(e), n, src, dst, m_stream);
    }
    void add(std::size_t n, const float* a, const float* b, float* out) override {
        cuda::add_cuda(n, a, b, out, m_stream);
    }
    std::uint64_t device_peak_bytes() const override { return cuda::device_bytes_peak(); }
    void reset_device_peak() override { cuda::reset_device_bytes_peak(); }

    void* stream() const override { return m_stream; }
    void synchronize() override { RINGSCALE_CUDA_CALL(cudaStreamSynchronize(m_stream)); }
    mark record() override {
        cudaEvent_t e = nullptr;
        RINGSCALE_CUDA_CALL(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        mark m{std::shared_ptr<void>(e, [](void* p) { cudaEventDestroy(as_event(p)); })};
        RINGSCALE_CUDA_CALL(cudaEventRecord(e, m_stream));
        return m;
    }
    void host_wait(const mark& m) override {
        if (m.event)
            RINGSCALE_CUDA_CALL(cudaEventSynchronize(as_event(m.event.get())));
    }
    void stream_wait(void* other, const mark& m) override {
        if (m.event && other)
            RINGSCALE_CUDA_CALL(
                cudaStreamWaitEvent(static_cast<cudaStream_t>(other), as_event(m.event.get()), 0));
    }
    std::size_t begin_phase() override { return record_timing_event(); }
    void end_phase(phase_timer&, phase p, std::size_t token) override {
        m_pending.push_back({p, token, record_timing_event()});
    }
    void finish_iteration(phase_timer& timer) override;

    void attention_fwd_init(const attention_shape& s, float* o, float* lse) override {
        cuda::attention_fwd_init_cuda(s, o, lse, m_stream);
    }
    void attention_fwd(const attention_shape& s, elem e, const void* q, const void* k,
                       const void* v, const row_positions& qp, const row_positions& kp, float* o,
                       float* lse, const progress_fn&) override {
        // No progress calls: the kernel runs asynchronously, and testing a staged MPI request
        // here could land its receive before the compute still reading that buffer ends.
        cuda::attention_fwd_cuda(s, attn_type(e), q, k, v, positions(qp, kp), o, lse, m_stream);
    }
    void attention_bwd_delta(const attention_shape& s, elem e, const float* o, const void* d_o,
                             float* delta) override {
        cuda::attention_bwd_delta_cuda(s, attn_type(e), o, d_o, delta, m_stream);
    }
    void attention_bwd(const attention_shape& s, elem e, const void* q, const void* k,
                       const void* v, const void* d_o, const float* lse, const float* delta,
                       const row_positions& qp, const row_positions& kp, float* dq, float* dk,
                       float* dv, const progress_fn&) override {
        cuda::attention_bwd_cuda(s, attn_type(e), q, k, v, d_o, lse, delta, positions(qp, kp), dq,
                                 dk, dv, m_stream);
    }
    void take_rows(std::size_t row_bytes, std::int64_t outer, std::int64_t src_rows,
                   const row_positions& index, const void* src, void* dst) override {
        cuda::take_rows_cuda(row_bytes, outer, src_rows, index.dev, index.count, src, dst,
                             m_stream);
    }
    void put_rows(std::size_t row_bytes, std::int64_t outer, std::int64_t dst_rows,
                  const row_positions& index, const void* src, void* dst) override {
        cuda::put_rows_cuda(row_bytes, outer, dst_rows, index.dev, index.count, src, dst, m_stream);
    }

  private:
    struct pending_phase {
        phase p;
        std::size_t start, stop; // indices into m_events
    };
    // Record the next pooled timing event on the compute stream; returns its index.
    std::size_t record_timing_event() {
        if (m_used == m_events.size()) {
            cudaEvent_t e = nullptr;
            RINGSCALE_CUDA_CALL(cudaEventCreate(&e));
            m_events.push_back(e);
        }
        RINGSCALE_CUDA_CALL(cudaEventRecord(as_event(m_events[m_used]), m_stream));
        return m_used++;
    }

    cudaStream_t m_stream = nullptr;
    std::vector<void*> m_events; // cudaEvent_t, reused every iteration
    std::size_t m_used = 0;
    std::vector<pending_phase> m_pending;
};

void cuda_device::finish_iteration(phase_timer& timer) {
    synchronize();
    for (const auto& ph : m_pending) {
        float ms = 0;
        RINGSCALE_CUDA_CALL(
            cudaEventElapsedTime(&ms, as_event(m_events[ph.start]), as_event(m_events[ph.stop])));
        timer.add(ph.p, static_cast<double>(ms) * 1e-3);
    }
    m_pending.clear();
    m_used = 0;
}

} // namespace

bool cuda_compiled() {
    return true;
}

std::unique_ptr<device> make_cuda_device() {
    if (cuda::cuda_device_count() == 0)
        throw config_error("--device cuda: no CUDA device is visible to this process "
                           "(check CUDA_VISIBLE_DEVICES and the driver)");
    return std::make_unique<cuda_device>();
}

} // namespace ringscale::kernels
