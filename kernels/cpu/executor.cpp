#include "kernels/cpu/executor.hpp"

#include "kernels/cpu/backend.hpp"
#include "src/base/error.hpp"
#include "src/base/memory.hpp"
#include "src/base/trace_events.hpp"

#include <cstring>

namespace ringscale::kernels::cpu {

void* cpu_executor::allocate(std::size_t bytes) {
    return bytes ? tracked_alloc(bytes) : nullptr;
}

void cpu_executor::release(void* ptr, std::size_t bytes) noexcept {
    if (ptr)
        tracked_free(ptr, bytes);
}

void cpu_executor::transfer(void* dst, const void* src, std::size_t bytes, copy_dir) {
    if (bytes)
        std::memmove(dst, src, bytes);
}

void cpu_executor::zero(void* dst, std::size_t bytes) {
    if (bytes)
        std::memset(dst, 0, bytes);
}

std::size_t cpu_executor::begin_phase() {
    const double t = now_s();
    std::size_t token = 0;
    std::memcpy(&token, &t, sizeof token);
    trace::phase_begin(); // --trace reads the clock apart from the phase's own timing
    return token;
}

void cpu_executor::end_phase(phase_timer& timer, phase p, std::size_t token) {
    double start = 0;
    std::memcpy(&start, &token, sizeof start);
    timer.add(p, now_s() - start);
    trace::phase_end(p == phase::comm_wait);
}

cpu_executor& as_cpu(executor& exec) {
    auto* cpu = dynamic_cast<cpu_executor*>(&exec);
    if (!cpu)
        throw config_error("a CPU kernel was given an executor that is not the CPU's");
    return *cpu;
}

std::unique_ptr<executor> make_executor() {
    return std::make_unique<cpu_executor>();
}

} // namespace ringscale::kernels::cpu
