// The compute backend a launch runs on, chosen at run time from --device the way
// comm::make_world chooses a communicator: its memory, the order and timing of work on its
// compute stream, and the attention building blocks that the ring and context-parallel
// schemes compose. The CPU device runs the fast CPU kernels on tracked host memory; the CUDA
// device runs kernels/cuda on one non-blocking stream of the bound GPU. Jobs see only this
// interface, so they hold no #ifdef; a binary built without CUDA gets not_compiled_error
// from make_device("cuda").
//
// Ordering contract. Work is enqueued on the compute stream and runs asynchronously on
// CUDA (synchronously on the CPU). Before communication reads a buffer that compute wrote,
// or writes one that compute still reads, the caller orders it after a mark(): for a
// stream-ordered communicator (NCCL) with stream_wait(comm.stream(), m), otherwise with
// host_wait(m). Compute enqueued after a communication request's wait() returns sees its data.
#pragma once

#include "kernels/attention_ref.hpp"
#include "kernels/elem.hpp"
#include "src/base/clock.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace ringscale::kernels {

/// A point in a device's compute-stream order (CUDA: an event). Empty on the CPU, where
/// every operation has finished when its call returns.
struct mark {
    std::shared_ptr<void> event;
};

/// Positions of the rows of one attention operand: the host copy (always) and a copy in the
/// device's memory (the same pointer on the CPU), `count` entries, sorted ascending.
/// `contiguous`: they are first, first + 1, ... (the CUDA kernels then skip position loads).
struct row_positions {
    const std::int64_t* host = nullptr;
    const std::int64_t* dev = nullptr;
    std::int64_t count = 0;
    bool contiguous = false;
};

/// Called between pieces of a long CPU kernel so the caller can drive MPI progress.
using progress_fn = std::function<void()>;

class device {
  public:
    virtual ~device() = default;
    /// "cpu" or "cuda".
    virtual std::string name() const = 0;
    /// Whether the attention kernels take inputs of type `e` here (CPU: f32; CUDA: bf16, f16).
    virtual bool supports(elem e) const = 0;

    // ---- memory --------------------------------------------------------------------------
    /// `bytes` of this device's memory, uninitialised (nullptr for 0): tracked host memory
    /// (peak_host_bytes) on the CPU, device memory (device_peak_bytes) on CUDA. Owned by the
    /// caller, returned with release(). Throws when the memory is not there.
    virtual void* allocate(std::size_t bytes) = 0;
    virtual void release(void* ptr, std::size_t bytes) noexcept = 0;
    /// Blocking copies between host memory and this device's memory; they wait for the
    /// compute stream's earlier work.
    virtual void upload(void* dst, const void* src_host, std::size_t bytes) = 0;
    virtual void download(void* dst_host, const void* src, std::size_t bytes) = 0;
    /// Asynchronous on the compute stream: copy, zero, round fp32 to `e`, out = a + b
    /// (out may alias a or b). Pointers are this device's memory.
    virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
    virtual void zero(void* dst, std::size_t bytes) = 0;
    virtual void convert(elem e, std::size_t n, const float* src, void* dst) = 0;
    virtual void add(std::size_t n, const float* a, const float* b, float* out) = 0;
    /// Peak bytes of device memory allocated since reset_device_peak() (0 on the CPU).
    virtual std::uint64_t device_peak_bytes() const = 0;
    virtual void reset_device_peak() = 0;

    // ---- order and time ------------------------------------------------------------------
    /// The compute stream (a cudaStream_t), nullptr on the CPU.
    virtual void* stream() const = 0;
    /// Block until all work enqueued so far has finished.
    virtual void synchronize() = 0;
    /// The current end of the compute stream.
    virtual mark record() = 0;
    /// Block the host until `m` is reached.
    virtual void host_wait(const mark& m) = 0;
    /// Work enqueued later on `stream` (another cudaStream_t, e.g. NCCL's) waits for `m`.
    virtual void stream_wait(void* stream, const mark& m) = 0;
    /// Time a phase (use device_scope): the CPU reads the host clock; CUDA records events on
    /// the compute stream, so a phase is the stream's time between the two points, and a
    /// wait for communication becomes the time the stream stood idle for it.
    virtual std::size_t begin_phase() = 0;
    virtual void end_phase(phase_timer& timer, phase p, std::size_t token) = 0;
    /// End of an iteration: wait for all work, then add the phases timed since the last call
    /// to `timer` (CUDA; the CPU added each to its own timer at once). Call it before reading
    /// a timer that device_scopes filled, and to discard phases timed outside an iteration.
    virtual void finish_iteration(phase_timer& timer) = 0;

    // ---- attention, as kernels/attention_cpu.hpp and kernels/cuda/attention_*.cuh ------------
    /// O [B,H,Sq,D] = 0, LSE [B,H,Sq] = -inf (fp32).
    virtual void attention_fwd_init(const attention_shape& s, float* o, float* lse) = 0;
    /// Merge one K/V block into the running (O, LSE). q, k, v are of type `e`. On the CPU
    /// `progress` runs between (batch, kv-head group) pieces.
    virtual void attention_fwd(const attention_shape& s, elem e, const void* q, const void* k,
                               const void* v, const row_positions& qp, const row_positions& kp,
                               float* o, float* lse, const progress_fn& progress = {}) = 0;
    /// delta [B,H,Sq] = rowsum(dO * O); OVERWRITES delta. d_o is of type `e`.
    virtual void attention_bwd_delta(const attention_shape& s, elem e, const float* o,
                                     const void* d_o, float* delta) = 0;
    /// ADDS one K/V block's share to dQ and its gradients to dK, dV (all fp32).
    virtual void attention_bwd(const attention_shape& s, elem e, const void* q, const void* k,
                               const void* v, const void* d_o, const float* lse, const float* delta,
                               const row_positions& qp, const row_positions& kp, float* dq,
                               float* dk, float* dv, const progress_fn& progress = {}) = 0;

    // ---- row permutations of [outer, rows, row_bytes] tensors (Ulysses, layouts) -------------
    /// dst[o][t] = src[o][index[t]] for t < index.count; src has `src_rows` rows per outer.
    virtual void take_rows(std::size_t row_bytes, std::int64_t outer, std::int64_t src_rows,
                           const row_positions& index, const void* src, void* dst) = 0;
    /// dst[o][index[t]] = src[o][t]; dst has `dst_rows` rows per outer, others untouched.
    virtual void put_rows(std::size_t row_bytes, std::int64_t outer, std::int64_t dst_rows,
                          const row_positions& index, const void* src, void* dst) = 0;
};

/// RAII: times one phase of `timer` on `dev` between construction and destruction.
class device_scope {
  public:
    device_scope(device& dev, phase_timer& timer, phase p)
        : m_dev(&dev), m_timer(&timer), m_phase(p), m_token(dev.begin_phase()) {}
    ~device_scope() {
        if (m_dev)
            m_dev->end_phase(*m_timer, m_phase, m_token);
    }
    device_scope(device_scope&& other) noexcept
        : m_dev(std::exchange(other.m_dev, nullptr)), m_timer(other.m_timer),
          m_phase(other.m_phase), m_token(other.m_token) {}
    device_scope(const device_scope&) = delete;
    device_scope& operator=(const device_scope&) = delete;
    device_scope& operator=(device_scope&&) = delete;

  private:
    device* m_dev;
    phase_timer* m_timer;
    phase m_phase;
    std::size_t m_token;
};

/// The device `name` ("cpu" | "cuda"): config_error for another name or no visible GPU,
/// not_compiled_error for cuda in a binary built without it. CUDA uses the current device
/// (bind it first).
std::unique_ptr<device> make_device(const std::string& name);

/// Whether this binary was built with the CUDA backend.
bool cuda_compiled();

/// The CPU device (always built).
std::unique_ptr<device> make_cpu_device();

} // namespace ringscale::kernels
