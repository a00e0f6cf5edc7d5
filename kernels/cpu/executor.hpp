// The CPU executor: tracked host memory, every call synchronous (marks are empty), phases on
// the host clock, and the attention workspace every attention kernel on it reuses.
#pragma once

#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/executor.hpp"

namespace ringscale::kernels::cpu {

class cpu_executor final : public executor {
  public:
    cpu_executor() : executor(device_kind::cpu, nullptr) {}

    void* allocate(std::size_t bytes) override;
    void release(void* ptr, std::size_t bytes) noexcept override;
    void transfer(void* dst, const void* src, std::size_t bytes, copy_dir dir) override;
    void zero(void* dst, std::size_t bytes) override;
    std::uint64_t device_peak_bytes() const override { return 0; }
    void reset_device_peak() override {}

    void synchronize() override {}
    mark record() override { return {}; }
    void host_wait(const mark&) override {}
    void stream_wait(void*, const mark&) override {}
    std::size_t begin_phase() override;
    void end_phase(phase_timer& timer, phase p, std::size_t token) override;
    void finish_iteration(phase_timer&) override {}

    /// Scratch of the attention kernels run on this executor (tracked host memory).
    attention_workspace& workspace() { return m_ws; }

  private:
    attention_workspace m_ws;
};

/// `exec` as the CPU executor it is (config_error otherwise).
cpu_executor& as_cpu(executor& exec);

} // namespace ringscale::kernels::cpu
