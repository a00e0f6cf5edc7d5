// NCCL implementation of the communicator for DEVICE memory, bootstrapped over MPI. All
// operations are issued on one communication stream owned by the communicator.
#pragma once

#include "comm/communicator.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

namespace ringscale::comm {

/// Throw an nccl error with NCCL's error string when `result` != ncclSuccess.
void nccl_check(ncclResult_t result, const char* call, const char* file, int line);
#define RINGSCALE_NCCL_CALL(expr) ::ringscale::comm::nccl_check((expr), #expr, __FILE__, __LINE__)

ncclDataType_t nccl_type(dtype t);

class nccl_communicator final : public communicator {
  public:
    /// Takes ownership of `comm` (destroyed with this object) and creates the stream on the
    /// current CUDA device, which must be the device `comm` was created on.
    explicit nccl_communicator(ncclComm_t comm);
    ~nccl_communicator() override;
    nccl_communicator(const nccl_communicator&) = delete;
    nccl_communicator& operator=(const nccl_communicator&) = delete;

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    comm_kind backend() const override { return comm_kind::nccl; }
    memory_space memory() const override { return memory_space::device; }
    /// The communication stream (a cudaStream_t).
    void* stream() const override { return m_stream; }
    bool stream_ordered() const override { return true; }

    /// isend, irecv: NCCL has no tags, so `tag` is ignored and messages between a pair match
    /// in issue order. A lone isend and irecv are separate stream operations; a two-way
    /// exchange must use isendrecv (grouped) or it can deadlock. split: collective,
    /// ncclCommSplit; a negative color (NCCL_SPLIT_NOCOLOR) returns nullptr.
    RINGSCALE_COMMUNICATOR_OVERRIDES

  private:
    void release() noexcept;
    void sync(const char* op);
    request_ptr record(const char* op);

    ncclComm_t m_comm = nullptr;
    cudaStream_t m_stream = nullptr;
    float* m_barrier_word = nullptr; // one device float for barrier()
    int m_rank = 0;
    int m_size = 1;
};

} // namespace ringscale::comm
