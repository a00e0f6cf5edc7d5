// The one narrow communicator interface every job talks to. MPI (host memory, or device memory
// staged through pinned host memory) and NCCL (device memory, bootstrapped over MPI) implement
// it; only the factory knows which exist.
#pragma once

#include "src/base/backend.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ringscale::comm {

/// Element types on the wire.
enum class dtype { f32, f64, i32, i64, u8, bf16, f16 };

/// Bytes per element of `t`.
std::size_t size_of(dtype t);
const char* to_string(dtype t);

enum class reduce_op { sum, max, min };

/// Where the buffers passed to a communicator live.
enum class memory_space { host, device };

/// An outstanding non-blocking operation. Destroying an unfinished request waits for it.
class request {
  public:
    virtual ~request() = default;
    /// Block until the operation completes.
    virtual void wait() = 0;
    /// True when complete; drives progress. Never blocks.
    virtual bool test() = 0;
};
using request_ptr = std::unique_ptr<request>;

/// Wait for every request in `reqs` and clear the vector.
void wait_all(std::vector<request_ptr>& reqs);

/// A group of ranks. All collective calls must be made by every rank of the group, in the
/// same order. Counts are elements of `type`; "per rank" counts are each rank's share.
///
/// In place (NCCL's convention, for the blocking and the non-blocking forms alike): allreduce
/// and all_to_all with send == recv; all_gather with send == recv + rank() * count_per_rank
/// (the rank's input is its block of the output); reduce_scatter with recv == send + rank() *
/// count_per_rank (the output is the rank's block of the input, whose other blocks are
/// undefined afterwards). Any other overlap of send and recv is an error. NCCL has no
/// in-place all_to_all (it throws); MPI uses MPI_IN_PLACE.
class communicator {
  public:
    virtual ~communicator() = default;

    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual comm_kind backend() const = 0;
    virtual memory_space memory() const = 0;

    /// Collective: returns when every rank has entered.
    virtual void barrier() = 0;

    /// Collective: recv[i] = op over ranks of send[i]; `count` elements.
    virtual void allreduce(const void* send, void* recv, std::size_t count, dtype type,
                           reduce_op op) = 0;
    /// Collective, non-blocking allreduce (gradient buckets overlapping backward).
    virtual request_ptr iallreduce(const void* send, void* recv, std::size_t count, dtype type,
                                   reduce_op op) = 0;
    /// Collective: recv holds size()*count_per_rank elements, rank r's block at r*count.
    virtual void all_gather(const void* send, void* recv, std::size_t count_per_rank,
                            dtype type) = 0;
    virtual request_ptr iall_gather(const void* send, void* recv, std::size_t count_per_rank,
                                    dtype type) = 0;
    /// Collective: send holds size()*count_per_rank elements; rank r receives block r reduced.
    virtual void reduce_scatter(const void* send, void* recv, std::size_t count_per_rank,
                                dtype type, reduce_op op) = 0;
    virtual request_ptr ireduce_scatter(const void* send, void* recv, std::size_t count_per_rank,
                                        dtype type, reduce_op op) = 0;
    /// Collective: block j of send goes to rank j; block i of recv comes from rank i.
    virtual void all_to_all(const void* send, void* recv, std::size_t count_per_rank,
                            dtype type) = 0;
    /// Collective: `count` elements from `root` to every rank.
    virtual void broadcast(void* buf, std::size_t count, dtype type, int root) = 0;

    /// Point to point, non-blocking. Pairs with a matching irecv/isend on the peer.
    virtual request_ptr isend(const void* buf, std::size_t count, dtype type, int peer,
                              int tag) = 0;
    virtual request_ptr irecv(void* buf, std::size_t count, dtype type, int peer, int tag) = 0;
    /// Send to `dest` and receive from `source` as one grouped exchange (a ring step).
    virtual request_ptr isendrecv(const void* send, std::size_t send_count, int dest, void* recv,
                                  std::size_t recv_count, int source, dtype type, int tag) = 0;

    /// Collective: sub-communicators of the ranks sharing `color`, ordered by `key`.
    virtual std::unique_ptr<communicator> split(int color, int key) = 0;

    /// The stream communication is issued on (NCCL: a cudaStream_t); nullptr for MPI.
    virtual void* stream() const { return nullptr; }
    /// True when operations are enqueued on stream() and touch their buffers when the stream
    /// reaches them (NCCL): order them after compute with a stream wait, not a host wait.
    /// False when a call reads its send buffer before returning and writes its receive
    /// buffer in wait()/test() (MPI, staged MPI).
    virtual bool stream_ordered() const { return false; }
};

/// The operations of communicator from barrier to split, declared `override` in a backend's
/// class: one list for every backend.
#define RINGSCALE_COMMUNICATOR_OVERRIDES                                                           \
    void barrier() override;                                                                       \
    void allreduce(const void* send, void* recv, std::size_t count, dtype type, reduce_op op)      \
        override;                                                                                  \
    request_ptr iallreduce(const void* send, void* recv, std::size_t count, dtype type,            \
                           reduce_op op) override;                                                 \
    void all_gather(const void* send, void* recv, std::size_t count_per_rank, dtype type)          \
        override;                                                                                  \
    request_ptr iall_gather(const void* send, void* recv, std::size_t count_per_rank, dtype type)  \
        override;                                                                                  \
    void reduce_scatter(const void* send, void* recv, std::size_t count_per_rank, dtype type,      \
                        reduce_op op) override;                                                    \
    request_ptr ireduce_scatter(const void* send, void* recv, std::size_t count_per_rank,          \
                                dtype type, reduce_op op) override;                                \
    void all_to_all(const void* send, void* recv, std::size_t count_per_rank, dtype type)          \
        override;                                                                                  \
    void broadcast(void* buf, std::size_t count, dtype type, int root) override;                   \
    request_ptr isend(const void* buf, std::size_t count, dtype type, int peer, int tag) override; \
    request_ptr irecv(void* buf, std::size_t count, dtype type, int peer, int tag) override;       \
    request_ptr isendrecv(const void* send, std::size_t send_count, int dest, void* recv,          \
                          std::size_t recv_count, int source, dtype type, int tag) override;       \
    std::unique_ptr<communicator> split(int color, int key) override;

/// Whether all_gather's buffers follow the in-place convention above.
inline bool in_place_all_gather(const void* send, const void* recv, std::size_t count_per_rank,
                                dtype type, int rank) {
    return send == static_cast<const char*>(recv) +
                       static_cast<std::size_t>(rank) * count_per_rank * size_of(type);
}
/// Whether reduce_scatter's buffers follow the in-place convention above.
inline bool in_place_reduce_scatter(const void* send, const void* recv, std::size_t count_per_rank,
                                    dtype type, int rank) {
    return in_place_all_gather(recv, send, count_per_rank, type, rank);
}

/// Communicator over MPI_COMM_WORLD for `memory` buffers (mpi; device memory is staged
/// through pinned host memory on the current device) or NCCL (nccl).
/// Collective over the world. Throws not_compiled_error for a backend not built in (device
/// memory needs CUDA) and config_error when device memory is asked for with no device visible.
std::unique_ptr<communicator> make_world(comm_kind backend, memory_space memory);

/// Whether a backend was compiled into this binary.
bool backend_compiled(comm_kind backend);

/// not_compiled_error (one line, as make_world would throw it) unless `backend` was compiled
/// into this binary.
void require_compiled(comm_kind backend);

/// The NCCL library's version ("2.28.3"), or "" when NCCL is not compiled in.
std::string nccl_version();

} // namespace ringscale::comm
