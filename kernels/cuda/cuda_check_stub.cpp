// Linked when CUDA is not built: no devices, and every call that would touch one throws
// not_compiled_error with the same API as cuda_check.cpp.
#include "kernels/cuda/cuda_check.hpp"

#include "src/base/error.hpp"

#include <string>

namespace ringscale::kernels::cuda {

namespace {
[[noreturn]] void not_compiled(const char* what) {
    throw not_compiled_error(std::string(what) +
                             ": the CUDA backend is not compiled into this ringscale");
}
} // namespace

void throw_cuda_error(int code, const char* call, const char* file, int line) {
    throw_call_error(error_kind::cuda, call, "CUDA error code " + std::to_string(code), file, line);
}

int cuda_device_count() {
    return 0;
}
void bind_local_device(int, int, bool) {
    not_compiled("--device cuda");
}
void device_synchronize() {
    not_compiled("device_synchronize");
}
std::size_t device_bytes_current() {
    return 0;
}
std::size_t device_bytes_peak() {
    return 0;
}
void reset_device_bytes_peak() {}
void* device_alloc(std::size_t bytes) {
    if (bytes == 0)
        return nullptr;
    not_compiled("device_alloc");
}
void device_free(void*, std::size_t) noexcept {}
void copy_host_to_device(void*, const void*, std::size_t) {
    not_compiled("copy_host_to_device");
}
void copy_device_to_host(void*, const void*, std::size_t) {
    not_compiled("copy_device_to_host");
}
void check_copy_count(std::size_t, std::size_t) {}

cuda_event_timer::cuda_event_timer() {
    not_compiled("cuda_event_timer");
}
cuda_event_timer::~cuda_event_timer() = default;
cuda_event_timer::cuda_event_timer(cuda_event_timer&&) noexcept {}
cuda_event_timer& cuda_event_timer::operator=(cuda_event_timer&&) noexcept {
    return *this;
}
void cuda_event_timer::start(void*) {
    not_compiled("cuda_event_timer");
}
void cuda_event_timer::stop(void*) {
    not_compiled("cuda_event_timer");
}
double cuda_event_timer::elapsed_s() const {
    not_compiled("cuda_event_timer");
}

} // namespace ringscale::kernels::cuda
