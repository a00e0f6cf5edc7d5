// The executor a launch computes on, chosen at run time from --device the way comm::make_world
// chooses a communicator (Ginkgo's Executor): its memory, copies, the order of work on its
// compute stream and the timing of phases. Kernels are free functions taking an executor
// (kernels/kernels.hpp), each implemented once per backend folder (kernels/cpu,
// kernels/cuda) and chosen by the executor's kind in one place (kernels/dispatch.cpp). The
// CPU executor works synchronously on tracked host memory; the CUDA executor on one
// non-blocking stream of the bound GPU. A binary built without CUDA gets not_compiled_error
// from make_executor(device_kind::cuda).
//
// Ordering contract. Work is enqueued on the compute stream and runs asynchronously on
// CUDA (synchronously on the CPU). Before communication reads a buffer that compute wrote,
// or writes one that compute still reads, the caller orders it after a mark: record(), then
// for a stream-ordered communicator (NCCL) stream_wait(comm.stream(), m), otherwise
// host_wait(m). Compute enqueued after a communication request's wait() returns sees its data.
#pragma once

#include "src/base/backend.hpp"
#include "src/base/clock.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace ringscale::kernels {

class event_recorder;

/// A point in an executor's compute-stream order (CUDA: an event). Empty on the CPU, where
/// every operation has finished when its call returns.
struct mark {
    std::shared_ptr<void> event;
};

/// Which way a copy goes: host memory into the executor's (blocking), back out (blocking),
/// or within the executor's memory (asynchronous on the compute stream).
enum class copy_dir { upload, download, within };

class executor {
  public:
    virtual ~executor() = default;
    executor(const executor&) = delete;
    executor& operator=(const executor&) = delete;

    /// cpu or cuda: which backend's kernels run on this executor.
    device_kind kind() const { return m_kind; }
    /// The compute stream (a cudaStream_t), nullptr on the CPU.
    void* stream() const { return m_stream; }

    // ---- memory --------------------------------------------------------------------------
    /// `bytes` of this executor's memory, uninitialised (nullptr for 0): tracked host memory
    /// (peak_host_bytes) on the CPU, device memory (device_peak_bytes) on CUDA. Owned by the
    /// caller, returned with release(). Throws when the memory is not there.
    virtual void* allocate(std::size_t bytes) = 0;
    /// Return memory from allocate() of `bytes` (nullptr is a no-op). Never throws.
    virtual void release(void* ptr, std::size_t bytes) noexcept = 0;
    /// Copy `bytes` as `dir` says (upload, download and copy below are its names).
    virtual void transfer(void* dst, const void* src, std::size_t bytes, copy_dir dir) = 0;
    /// Blocking copy of `bytes` from host memory into this executor's memory; waits for the
    /// compute stream's earlier work.
    void upload(void* dst, const void* src_host, std::size_t bytes) {
        transfer(dst, src_host, bytes, copy_dir::upload);
    }
    /// Blocking copy of `bytes` from this executor's memory into host memory; waits for the
    /// compute stream's earlier work.
    void download(void* dst_host, const void* src, std::size_t bytes) {
        transfer(dst_host, src, bytes, copy_dir::download);
    }
    /// Asynchronous on the compute stream: copy `bytes` within this executor's memory.
    void copy(void* dst, const void* src, std::size_t bytes) {
        transfer(dst, src, bytes, copy_dir::within);
    }
    /// Asynchronous on the compute stream: set `bytes` of this executor's memory to zero.
    virtual void zero(void* dst, std::size_t bytes) = 0;
    /// Peak bytes of device memory allocated since reset_device_peak() (0 on the CPU).
    virtual std::uint64_t device_peak_bytes() const = 0;
    /// Restart the device high-water mark at the memory allocated now (no-op on the CPU).
    virtual void reset_device_peak() = 0;

    // ---- order and time ------------------------------------------------------------------
    /// Block until all work enqueued so far has finished.
    virtual void synchronize() = 0;
    /// The current end of the compute stream.
    virtual mark record() = 0;
    /// Block the host until `m` is reached.
    virtual void host_wait(const mark& m) = 0;
    /// Work enqueued later on `stream` (another cudaStream_t, e.g. NCCL's) waits for `m`.
    virtual void stream_wait(void* stream, const mark& m) = 0;
    /// Start timing a phase (use phase_scope); returns the token end_phase takes. The CPU
    /// reads the host clock; CUDA records an event on the compute stream, so a phase is the
    /// stream's time between two points, and a wait for communication becomes the time the
    /// stream stood idle for it.
    virtual std::size_t begin_phase() = 0;
    /// End the phase started with `token` and add it to `timer` as phase `p` (CUDA: at the
    /// next finish_iteration).
    virtual void end_phase(phase_timer& timer, phase p, std::size_t token) = 0;
    /// End of an iteration: wait for all work, then add the phases timed since the last call
    /// to `timer` (CUDA; the CPU added each to its own timer at once). Call it before reading
    /// a timer that phase_scopes filled, and to discard phases timed outside an iteration.
    virtual void finish_iteration(phase_timer& timer) = 0;
    /// The device's event recorder (kernels/event_recorder.hpp): --profile and --trace on a
    /// GPU, resolved by finish_iteration, its phases recorded as spans while it has a consumer.
    /// Null on the CPU, which reads the host clock.
    virtual event_recorder* events() { return nullptr; }

  protected:
    /// `stream`: the compute stream (a cudaStream_t; nullptr on the CPU), owned by the derived
    /// executor.
    executor(device_kind kind, void* stream) : m_kind(kind), m_stream(stream) {}

  private:
    device_kind m_kind;
    void* m_stream;
};

/// RAII: times one phase of `timer` on `exec` between construction and destruction.
class phase_scope {
  public:
    phase_scope(executor& exec, phase_timer& timer, phase p)
        : m_exec(&exec), m_timer(&timer), m_phase(p), m_token(exec.begin_phase()) {}
    ~phase_scope() {
        if (m_exec)
            m_exec->end_phase(*m_timer, m_phase, m_token);
    }
    phase_scope(phase_scope&& other) noexcept
        : m_exec(std::exchange(other.m_exec, nullptr)), m_timer(other.m_timer),
          m_phase(other.m_phase), m_token(other.m_token) {}
    phase_scope(const phase_scope&) = delete;
    phase_scope& operator=(const phase_scope&) = delete;
    phase_scope& operator=(phase_scope&&) = delete;

  private:
    executor* m_exec;
    phase_timer* m_timer;
    phase m_phase;
    std::size_t m_token;
};

/// The executor of `kind`: config_error for cuda with no visible GPU, not_compiled_error for
/// cuda in a binary built without it. CUDA uses the current device (bind it first).
std::unique_ptr<executor> make_executor(device_kind kind);

/// Whether this binary was built with the CUDA backend.
bool cuda_compiled();

/// not_compiled_error (one line naming the fix, as make_executor would throw it) unless the
/// backend of `kind` was built into this binary.
void require_compiled(device_kind kind);

} // namespace ringscale::kernels
