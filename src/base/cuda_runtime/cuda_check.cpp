#include "src/base/cuda_runtime/cuda_check.hpp"

#include "src/base/error.hpp"

#include <atomic>
#include <cuda_runtime.h>
#include <fmt/format.h>

namespace ringscale::cuda_runtime {

namespace {
std::atomic<std::size_t> g_bytes_current{0};
std::atomic<std::size_t> g_bytes_peak{0};

void raise_peak(std::size_t now) {
    std::size_t peak = g_bytes_peak.load();
    while (now > peak && !g_bytes_peak.compare_exchange_weak(peak, now)) {
    }
}

cudaEvent_t as_event(void* e) {
    return static_cast<cudaEvent_t>(e);
}
} // namespace

void throw_cuda_error(int code, const char* call, const char* file, int line) {
    const auto status = static_cast<cudaError_t>(code);
    throw_call_error(error_kind::cuda, call,
                     fmt::format("{} ({})", cudaGetErrorString(status), cudaGetErrorName(status)),
                     file, line);
}

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); // reset the last-error state so later checked calls start clean
        return 0;
    }
    return count;
}

void bind_local_device(int local_rank, int local_size, bool allow_sharing) {
    const int count = cuda_device_count();
    if (count == 0)
        throw config_error("--device cuda: no CUDA device is visible to this process "
                           "(check CUDA_VISIBLE_DEVICES and the driver)");
    if (local_size > count && !allow_sharing)
        throw config_error(
            fmt::format("--device cuda: {} ranks on this node but only {} visible CUDA device(s); "
                        "start fewer ranks per node or allow device sharing",
                        local_size, count));
    RINGSCALE_CUDA_CALL(cudaSetDevice(local_rank % count));
}

void device_synchronize() {
    RINGSCALE_CUDA_CALL(cudaDeviceSynchronize());
}

std::size_t device_bytes_current() {
    return g_bytes_current.load();
}
std::size_t device_bytes_peak() {
    return g_bytes_peak.load();
}
void reset_device_bytes_peak() {
    g_bytes_peak.store(g_bytes_current.load());
}

void* device_alloc(std::size_t bytes) {
    if (bytes == 0)
        return nullptr;
    void* ptr = nullptr;
    RINGSCALE_CUDA_CALL(cudaMalloc(&ptr, bytes));
    raise_peak(g_bytes_current.fetch_add(bytes) + bytes);
    return ptr;
}

void device_free(void* ptr, std::size_t bytes) noexcept {
    if (ptr == nullptr)
        return;
    cudaFree(ptr); // an error here is already sticky and resurfaces at the next checked call
    g_bytes_current.fetch_sub(bytes);
}

void copy_host_to_device(void* dst_device, const void* src_host, std::size_t bytes) {
    if (bytes == 0)
        return;
    RINGSCALE_CUDA_CALL(cudaMemcpy(dst_device, src_host, bytes, cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy returns once the data is staged, before the DMA lands
    // (CUDA "API synchronization behavior"); work on a non-blocking stream (NCCL's) is not
    // ordered after it. Wait for the legacy stream that carries the DMA, so the copy is
    // complete on return (seen on an H200: NCCL out-of-place results overwritten by the
    // validation's sentinel upload).
    RINGSCALE_CUDA_CALL(cudaStreamSynchronize(cudaStreamLegacy));
}

void copy_device_to_host(void* dst_host, const void* src_device, std::size_t bytes) {
    if (bytes > 0)
        RINGSCALE_CUDA_CALL(cudaMemcpy(dst_host, src_device, bytes, cudaMemcpyDeviceToHost));
}

void check_copy_count(std::size_t count, std::size_t size) {
    if (count > size)
        throw config_error(
            fmt::format("device_buffer: copy of {} elements exceeds its {} elements", count, size));
}

cuda_event_timer::cuda_event_timer() {
    cudaEvent_t start = nullptr, stop = nullptr;
    RINGSCALE_CUDA_CALL(cudaEventCreate(&start));
    m_start = start;
    const cudaError_t status = cudaEventCreate(&stop);
    if (status != cudaSuccess) {
        cudaEventDestroy(start);
        RINGSCALE_CUDA_CALL(status);
    }
    m_stop = stop;
}

cuda_event_timer::~cuda_event_timer() {
    if (m_start)
        cudaEventDestroy(as_event(m_start));
    if (m_stop)
        cudaEventDestroy(as_event(m_stop));
}

cuda_event_timer::cuda_event_timer(cuda_event_timer&& other) noexcept
    : m_start(std::exchange(other.m_start, nullptr)), m_stop(std::exchange(other.m_stop, nullptr)) {
}

cuda_event_timer& cuda_event_timer::operator=(cuda_event_timer&& other) noexcept {
    if (this != &other) {
        std::swap(m_start, other.m_start);
        std::swap(m_stop, other.m_stop);
    }
    return *this;
}

void cuda_event_timer::start(void* stream) {
    RINGSCALE_CUDA_CALL(cudaEventRecord(as_event(m_start), static_cast<cudaStream_t>(stream)));
}

void cuda_event_timer::stop(void* stream) {
    RINGSCALE_CUDA_CALL(cudaEventRecord(as_event(m_stop), static_cast<cudaStream_t>(stream)));
}

double cuda_event_timer::elapsed_s() const {
    RINGSCALE_CUDA_CALL(cudaEventSynchronize(as_event(m_stop)));
    float ms = 0.0f;
    RINGSCALE_CUDA_CALL(cudaEventElapsedTime(&ms, as_event(m_start), as_event(m_stop)));
    return static_cast<double>(ms) * 1e-3;
}

} // namespace ringscale::cuda_runtime
