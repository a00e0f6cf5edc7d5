// MPI for DEVICE buffers, staged through pinned host memory: every call copies its device
// input to a pinned host block, runs the MPI communicator on host memory, and copies the
// result back to the device. This is `--comm mpi` with `--device cuda`, and the only choice
// when several ranks share one GPU (NCCL needs a device per rank). It does not assume a
// CUDA-aware MPI. Compiled only with CUDA (make_world says "not compiled" otherwise); free of
// CUDA types.
//
// Ordering: copies run on stream(), a BLOCKING stream created at construction, so they start
// after work already queued on the legacy default stream. Work that produces a send buffer on
// a non-blocking stream must be synchronised (or ordered on stream()) by the caller first.
//
// In place (communicator.hpp's convention): the device buffer is staged into ONE pinned block
// and MPI runs in place on it (MPI_IN_PLACE), so aliasing device buffers is safe; an in-place
// reduce-scatter copies back only the rank's own block.
//
// Asynchronous calls (iallreduce, iall_gather, ireduce_scatter, isend, irecv, isendrecv) copy
// their device input to the host BEFORE returning (blocking that copy), post the MPI operation
// on the host copy, and copy the result to the device when wait() or a successful test()
// completes it; the device receive buffer is untouched until then. So the send buffer may be
// reused as soon as the call returns, and overlap is between MPI and compute only, never
// between the staging copies and compute.
#pragma once

#include "comm/communicator.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/pinned_pool.hpp"

#include <memory>

namespace ringscale::comm {

class mpi_staged_communicator final : public communicator {
  public:
    /// Collective over `comm`: duplicates it (as mpi_communicator) and creates the staging
    /// stream on the CURRENT CUDA device. Throws a cuda error when no device is usable.
    explicit mpi_staged_communicator(MPI_Comm comm);
    ~mpi_staged_communicator() override;
    mpi_staged_communicator(const mpi_staged_communicator&) = delete;
    mpi_staged_communicator& operator=(const mpi_staged_communicator&) = delete;

    int rank() const override { return m_mpi->rank(); }
    int size() const override { return m_mpi->size(); }
    comm_kind backend() const override { return comm_kind::mpi; }
    memory_space memory() const override { return memory_space::device; }
    /// The staging stream (a cudaStream_t).
    void* stream() const override { return m_stream.get(); }
    /// Pinned host bytes held for staging, idle or in flight.
    std::size_t pinned_bytes() const { return m_pool->bytes_pinned(); }

    /// split: collective, MPI_Comm_split, staged the same way.
    RINGSCALE_COMMUNICATOR_OVERRIDES

  private:
    /// A pinned copy of `bytes` of device memory at `device` (blocking).
    pinned_block stage_in(const void* device, std::size_t bytes);
    /// Copy `bytes` of device memory to pinned `host` (blocking).
    void stage_into(void* host, const void* device, std::size_t bytes);
    /// A pinned block of size() blocks with the device's `send` (`block` bytes) staged into
    /// the rank's own block: an in-place all-gather's buffer.
    pinned_block stage_own_block(const void* send, std::size_t block);
    /// Copy `bytes` of pinned `host` to `device` (blocking).
    void stage_out(void* device, const void* host, std::size_t bytes);
    /// A request that completes `inner` and then copies `recv_bytes` of `recv_block`, from
    /// `recv_offset` on, to `recv_device`.
    request_ptr deferred(request_ptr inner, pinned_block send_block, pinned_block recv_block,
                         void* recv_device, std::size_t recv_bytes, std::size_t recv_offset = 0);

    std::unique_ptr<mpi_communicator> m_mpi;
    std::shared_ptr<pinned_pool> m_pool;
    std::shared_ptr<void> m_stream; // cudaStream_t; shared with requests that outlive us
};

/// Collective over MPI_COMM_WORLD: the staged communicator on the CURRENT device (bind the
/// device first). Throws config_error when no CUDA device is visible. Built with CUDA only;
/// make_world answers "not compiled" without it.
std::unique_ptr<communicator> make_mpi_staged_world();

} // namespace ringscale::comm
