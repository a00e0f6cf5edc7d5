// Compile-checked against NCCL 2.28 / CUDA 13 headers; not yet run on a GPU.
#include "comm/nccl_communicator.hpp"

#include "comm/blocking.hpp"
#include "src/base/error.hpp"

#include <mpi.h>

namespace ringscale::comm {

namespace {

void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
    if (status != cudaSuccess)
        throw_call_error(error_kind::cuda, call, cudaGetErrorString(status), file, line);
}
#define RINGSCALE_NCCL_CUDA_CALL(expr) cuda_check((expr), #expr, __FILE__, __LINE__)

ncclRedOp_t nccl_op(reduce_op op) {
    switch (op) {
    case reduce_op::sum:
        return ncclSum;
    case reduce_op::max:
        return ncclMax;
    case reduce_op::min:
        return ncclMin;
    }
    return ncclSum;
}

/// Completion of work enqueued on the communication stream, marked by one CUDA event.
class nccl_request final : public request {
  public:
    nccl_request(cudaStream_t stream, const char* op) : m_op(op) {
        RINGSCALE_NCCL_CUDA_CALL(cudaEventCreateWithFlags(&m_event, cudaEventDisableTiming));
        const cudaError_t status = cudaEventRecord(m_event, stream);
        if (status != cudaSuccess) {
            cudaEventDestroy(m_event);
            RINGSCALE_NCCL_CUDA_CALL(status);
        }
    }
    ~nccl_request() override {
        if (!m_done) {
            blocking_scope blocked(m_op);
            cudaEventSynchronize(m_event); // no throwing from a destructor
        }
        cudaEventDestroy(m_event);
    }
    nccl_request(const nccl_request&) = delete;
    nccl_request& operator=(const nccl_request&) = delete;

    void wait() override {
        if (m_done)
            return;
        blocking_scope blocked(m_op);
        RINGSCALE_NCCL_CUDA_CALL(cudaEventSynchronize(m_event));
        m_done = true;
    }
    bool test() override {
        if (m_done)
            return true;
        const cudaError_t status = cudaEventQuery(m_event);
        if (status == cudaErrorNotReady)
            return false;
        RINGSCALE_NCCL_CUDA_CALL(status);
        m_done = true;
        return true;
    }

  private:
    cudaEvent_t m_event = nullptr;
    const char* m_op; // what a wait on this request is blocked in, for the watchdog
    bool m_done = false;
};

std::size_t block_bytes(std::size_t count, dtype type) {
    return count * size_of(type);
}

} // namespace

void nccl_check(ncclResult_t result, const char* call, const char* file, int line) {
    if (result != ncclSuccess)
        throw_call_error(error_kind::nccl, call, ncclGetErrorString(result), file, line);
}

ncclDataType_t nccl_type(dtype t) {
    switch (t) {
    case dtype::f32:
        return ncclFloat32;
    case dtype::f64:
        return ncclFloat64;
    case dtype::i32:
        return ncclInt32;
    case dtype::i64:
        return ncclInt64;
    case dtype::u8:
        return ncclUint8;
    case dtype::bf16:
        return ncclBfloat16;
    case dtype::f16:
        return ncclFloat16;
    }
    return ncclFloat32;
}

nccl_communicator::nccl_communicator(ncclComm_t comm) : m_comm(comm) {
    try {
        RINGSCALE_NCCL_CALL(ncclCommUserRank(m_comm, &m_rank));
        RINGSCALE_NCCL_CALL(ncclCommCount(m_comm, &m_size));
        RINGSCALE_NCCL_CUDA_CALL(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
        RINGSCALE_NCCL_CUDA_CALL(cudaMalloc(&m_barrier_word, sizeof(float)));
        RINGSCALE_NCCL_CUDA_CALL(cudaMemset(m_barrier_word, 0, sizeof(float)));
    } catch (...) {
        release(); // the destructor does not run for a constructor that throws
        throw;
    }
}

nccl_communicator::~nccl_communicator() {
    release();
}

void nccl_communicator::release() noexcept {
    // Best effort and never throwing: finish queued work, then release in reverse order.
    if (m_stream)
        cudaStreamSynchronize(m_stream);
    if (m_comm)
        ncclCommDestroy(m_comm);
    if (m_barrier_word)
        cudaFree(m_barrier_word);
    if (m_stream)
        cudaStreamDestroy(m_stream);
    m_comm = nullptr;
    m_barrier_word = nullptr;
    m_stream = nullptr;
}

void nccl_communicator::sync(const char* op) {
    blocking_scope blocked(op);
    RINGSCALE_NCCL_CUDA_CALL(cudaStreamSynchronize(m_stream));
}

request_ptr nccl_communicator::record(const char* op) {
    return std::make_unique<nccl_request>(m_stream, op);
}

void nccl_communicator::barrier() {
    RINGSCALE_NCCL_CALL(
        ncclAllReduce(m_barrier_word, m_barrier_word, 1, ncclFloat32, ncclSum, m_comm, m_stream));
    sync("barrier");
}

void nccl_communicator::allreduce(const void* send, void* recv, std::size_t count, dtype type,
                                  reduce_op op) {
    RINGSCALE_NCCL_CALL(
        ncclAllReduce(send, recv, count, nccl_type(type), nccl_op(op), m_comm, m_stream));
    sync("allreduce");
}

request_ptr nccl_communicator::iallreduce(const void* send, void* recv, std::size_t count,
                                          dtype type, reduce_op op) {
    RINGSCALE_NCCL_CALL(
        ncclAllReduce(send, recv, count, nccl_type(type), nccl_op(op), m_comm, m_stream));
    return record("allreduce");
}

void nccl_communicator::all_gather(const void* send, void* recv, std::size_t count_per_rank,
                                   dtype type) {
    RINGSCALE_NCCL_CALL(
        ncclAllGather(send, recv, count_per_rank, nccl_type(type), m_comm, m_stream));
    sync("all_gather");
}

request_ptr nccl_communicator::iall_gather(const void* send, void* recv, std::size_t count_per_rank,
                                           dtype type) {
    RINGSCALE_NCCL_CALL(
        ncclAllGather(send, recv, count_per_rank, nccl_type(type), m_comm, m_stream));
    return record("all_gather");
}

void nccl_communicator::reduce_scatter(const void* send, void* recv, std::size_t count_per_rank,
                                       dtype type, reduce_op op) {
    RINGSCALE_NCCL_CALL(ncclReduceScatter(send, recv, count_per_rank, nccl_type(type), nccl_op(op),
                                          m_comm, m_stream));
    sync("reduce_scatter");
}

request_ptr nccl_communicator::ireduce_scatter(const void* send, void* recv,
                                               std::size_t count_per_rank, dtype type,
                                               reduce_op op) {
    RINGSCALE_NCCL_CALL(ncclReduceScatter(send, recv, count_per_rank, nccl_type(type), nccl_op(op),
                                          m_comm, m_stream));
    return record("reduce_scatter");
}

void nccl_communicator::all_to_all(const void* send, void* recv, std::size_t count_per_rank,
                                   dtype type) {
    if (send == recv && count_per_rank > 0) // grouped sends and receives on one buffer race
        throw error(error_kind::nccl, "NCCL has no in-place all-to-all (send == recv); use "
                                      "separate buffers");
    const std::size_t bytes = block_bytes(count_per_rank, type);
    const auto* src = static_cast<const unsigned char*>(send);
    auto* dst = static_cast<unsigned char*>(recv);
    RINGSCALE_NCCL_CALL(ncclGroupStart());
    for (int peer = 0; peer < m_size; ++peer) {
        const std::size_t offset = static_cast<std::size_t>(peer) * bytes;
        const ncclResult_t sent =
            ncclSend(src + offset, count_per_rank, nccl_type(type), peer, m_comm, m_stream);
        const ncclResult_t received =
            sent == ncclSuccess
                ? ncclRecv(dst + offset, count_per_rank, nccl_type(type), peer, m_comm, m_stream)
                : sent;
        if (received != ncclSuccess) {
            ncclGroupEnd(); // close the group before reporting, so the communicator stays usable
            RINGSCALE_NCCL_CALL(received);
        }
    }
    RINGSCALE_NCCL_CALL(ncclGroupEnd());
    sync("all_to_all");
}

void nccl_communicator::broadcast(void* buf, std::size_t count, dtype type, int root) {
    RINGSCALE_NCCL_CALL(ncclBroadcast(buf, buf, count, nccl_type(type), root, m_comm, m_stream));
    sync("broadcast");
}

request_ptr nccl_communicator::isend(const void* buf, std::size_t count, dtype type, int peer,
                                     int /*tag*/) {
    RINGSCALE_NCCL_CALL(ncclSend(buf, count, nccl_type(type), peer, m_comm, m_stream));
    return record("send");
}

request_ptr nccl_communicator::irecv(void* buf, std::size_t count, dtype type, int peer,
                                     int /*tag*/) {
    RINGSCALE_NCCL_CALL(ncclRecv(buf, count, nccl_type(type), peer, m_comm, m_stream));
    return record("recv");
}

request_ptr nccl_communicator::isendrecv(const void* send, std::size_t send_count, int dest,
                                         void* recv, std::size_t recv_count, int source, dtype type,
                                         int /*tag*/) {
    RINGSCALE_NCCL_CALL(ncclGroupStart());
    ncclResult_t result = ncclSend(send, send_count, nccl_type(type), dest, m_comm, m_stream);
    if (result == ncclSuccess)
        result = ncclRecv(recv, recv_count, nccl_type(type), source, m_comm, m_stream);
    const ncclResult_t ended = ncclGroupEnd();
    RINGSCALE_NCCL_CALL(result);
    RINGSCALE_NCCL_CALL(ended);
    return record("sendrecv");
}

std::unique_ptr<communicator> nccl_communicator::split(int color, int key) {
    blocking_scope blocked("split");
    ncclComm_t sub = nullptr;
    RINGSCALE_NCCL_CALL(
        ncclCommSplit(m_comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &sub, nullptr));
    if (sub == nullptr)
        return nullptr;
    return std::make_unique<nccl_communicator>(sub);
}

std::string nccl_version() {
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess)
        return "unknown";
    // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9.
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
           std::to_string(v % 100);
}

/// Collective over MPI_COMM_WORLD: rank 0 creates the NCCL unique id and broadcasts it over
/// MPI; every rank then joins on its CURRENT CUDA device, so bind the device first.
std::unique_ptr<communicator> make_nccl_world() {
    int device_count = 0;
    if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0)
        throw config_error("--comm nccl: no CUDA device is visible to this process");
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ncclUniqueId id{};
    if (rank == 0)
        RINGSCALE_NCCL_CALL(ncclGetUniqueId(&id));
    {
        blocking_scope blocked("nccl bootstrap");
        const int rc = MPI_Bcast(&id, static_cast<int>(sizeof(id)), MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            throw error(error_kind::mpi, "MPI_Bcast of the NCCL unique id failed");
        ncclComm_t comm = nullptr;
        RINGSCALE_NCCL_CALL(ncclCommInitRank(&comm, size, id, rank));
        return std::make_unique<nccl_communicator>(comm);
    }
}

} // namespace ringscale::comm
