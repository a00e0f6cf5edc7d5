#include "kernels/cuda/executor.hpp"

#include "kernels/cuda/backend.hpp"
#include "kernels/cuda/event_pool.hpp"
#include "kernels/cuda/lowp_linear.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace rt = ringscale::cuda_runtime;

namespace {

cudaEvent_t as_event(void* e) {
    return static_cast<cudaEvent_t>(e);
}

void* new_stream() {
    cudaStream_t s = nullptr;
    RINGSCALE_CUDA_CALL(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

} // namespace

cuda_executor::cuda_executor()
    : executor(device_kind::cuda, new_stream()),
      m_pool(std::make_unique<event_pool>(stream(), device_events_max)),
      m_recorder(std::make_unique<event_recorder>(*m_pool, device_events_max)) {}

cuda_executor::~cuda_executor() {
    auto* s = static_cast<cudaStream_t>(stream());
    cudaStreamSynchronize(s); // never throws from a destructor
    m_lowp.reset();           // its buffers and cuBLASLt handle, before the stream
    m_recorder.reset();
    m_pool.reset(); // its events
    for (auto& b : m_blas)
        b.reset(); // before the stream they are bound to
    for (void* e : m_events)
        cudaEventDestroy(as_event(e));
    cudaStreamDestroy(s);
}

void* cuda_executor::allocate(std::size_t bytes) {
    return rt::device_alloc(bytes);
}

void cuda_executor::release(void* ptr, std::size_t bytes) noexcept {
    if (ptr)
        cudaStreamSynchronize(static_cast<cudaStream_t>(stream())); // queued work may use it
    rt::device_free(ptr, bytes);
}

void cuda_executor::transfer(void* dst, const void* src, std::size_t bytes, copy_dir dir) {
    switch (dir) {
    case copy_dir::upload:
        synchronize();
        rt::copy_host_to_device(dst, src, bytes);
        return;
    case copy_dir::download:
        synchronize();
        rt::copy_device_to_host(dst, src, bytes);
        return;
    case copy_dir::within:
        if (bytes)
            RINGSCALE_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                                static_cast<cudaStream_t>(stream())));
        return;
    }
}

void cuda_executor::zero(void* dst, std::size_t bytes) {
    if (bytes)
        RINGSCALE_CUDA_CALL(cudaMemsetAsync(dst, 0, bytes, static_cast<cudaStream_t>(stream())));
}

std::uint64_t cuda_executor::device_peak_bytes() const {
    return rt::device_bytes_peak();
}

void cuda_executor::reset_device_peak() {
    rt::reset_device_bytes_peak();
}

void cuda_executor::synchronize() {
    RINGSCALE_CUDA_CALL(cudaStreamSynchronize(static_cast<cudaStream_t>(stream())));
}

mark cuda_executor::record() {
    cudaEvent_t e = nullptr;
    RINGSCALE_CUDA_CALL(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    mark m{std::shared_ptr<void>(e, [](void* p) { cudaEventDestroy(as_event(p)); })};
    RINGSCALE_CUDA_CALL(cudaEventRecord(e, static_cast<cudaStream_t>(stream())));
    return m;
}

void cuda_executor::host_wait(const mark& m) {
    if (m.event)
        RINGSCALE_CUDA_CALL(cudaEventSynchronize(as_event(m.event.get())));
}

void cuda_executor::stream_wait(void* other, const mark& m) {
    if (m.event && other)
        RINGSCALE_CUDA_CALL(
            cudaStreamWaitEvent(static_cast<cudaStream_t>(other), as_event(m.event.get()), 0));
}

std::size_t cuda_executor::record_timing_event() {
    if (m_used == m_events.size()) {
        cudaEvent_t e = nullptr;
        RINGSCALE_CUDA_CALL(cudaEventCreate(&e));
        m_events.push_back(e);
    }
    RINGSCALE_CUDA_CALL(
        cudaEventRecord(as_event(m_events[m_used]), static_cast<cudaStream_t>(stream())));
    return m_used++;
}

std::size_t cuda_executor::begin_phase() {
    const std::size_t token = record_timing_event();
    if (m_phase_span.size() <= token)
        m_phase_span.resize(token + 1);
    m_phase_span[token] = m_recorder->open();
    return token;
}

void cuda_executor::end_phase(phase_timer&, phase p, std::size_t token) {
    m_pending.push_back({p, token, record_timing_event()});
    if (token >= m_phase_span.size() || m_phase_span[token] == event_recorder::npos)
        return;
    m_recorder->close(m_phase_span[token], phase_label(*m_recorder, p == phase::comm_wait));
}

void cuda_executor::finish_iteration(phase_timer& timer) {
    synchronize();
    for (const auto& ph : m_pending) {
        float ms = 0;
        RINGSCALE_CUDA_CALL(
            cudaEventElapsedTime(&ms, as_event(m_events[ph.start]), as_event(m_events[ph.stop])));
        timer.add(ph.p, static_cast<double>(ms) * 1e-3);
    }
    m_pending.clear();
    m_used = 0;
    m_recorder->resolve(); // --profile, --trace: nothing when neither asked for this iteration
}

cublas_context& cuda_executor::blas(gemm_math math) {
    auto& b = m_blas[math == gemm_math::tf32 ? 1 : 0];
    if (!b)
        b = std::make_unique<cublas_context>(stream(), math == gemm_math::tf32);
    return *b;
}

lowp_linear& cuda_executor::lowp() {
    if (!m_lowp)
        m_lowp = std::make_unique<lowp_linear>(*this);
    return *m_lowp;
}

cuda_executor& as_cuda(executor& exec) {
    auto* cuda = dynamic_cast<cuda_executor*>(&exec);
    if (!cuda)
        throw config_error("a CUDA kernel was given an executor that is not the CUDA one");
    return *cuda;
}

std::unique_ptr<executor> make_executor() {
    if (rt::cuda_device_count() == 0)
        throw config_error("--device cuda: no CUDA device is visible to this process "
                           "(check CUDA_VISIBLE_DEVICES and the driver)");
    return std::make_unique<cuda_executor>();
}

} // namespace ringscale::kernels::cuda

namespace ringscale::kernels {

bool cuda_compiled() {
    return true;
}

} // namespace ringscale::kernels
