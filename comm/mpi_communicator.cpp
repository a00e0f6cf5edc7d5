#include "comm/mpi_communicator.hpp"

#include "comm/blocking.hpp"
#include "src/base/error.hpp"

#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <functional>

namespace ringscale::comm {

namespace {

int as_count(std::size_t count) {
    if (count > static_cast<std::size_t>(INT_MAX))
        throw error(error_kind::mpi,
                    fmt::format("message of {} elements exceeds MPI's int count limit", count));
    return static_cast<int>(count);
}

MPI_Op mpi_op(reduce_op op) {
    switch (op) {
    case reduce_op::sum:
        return MPI_SUM;
    case reduce_op::max:
        return MPI_MAX;
    case reduce_op::min:
        return MPI_MIN;
    }
    return MPI_SUM;
}

void require_reducible(dtype t) {
    if (t == dtype::bf16 || t == dtype::f16)
        throw error(error_kind::mpi, fmt::format("MPI cannot reduce {} data", to_string(t)));
}

/// Owns MPI requests; waits for them in wait() or on destruction, then runs `then` once.
class mpi_request final : public request {
  public:
    mpi_request(int n, const char* op, std::function<void()> then = {})
        : m_reqs(static_cast<std::size_t>(n), MPI_REQUEST_NULL), m_op(op), m_then(std::move(then)) {
    }
    ~mpi_request() override {
        if (!m_done) {
            blocking_scope blocked(m_op);
            if (MPI_Waitall(static_cast<int>(m_reqs.size()), m_reqs.data(), MPI_STATUSES_IGNORE) ==
                    MPI_SUCCESS &&
                m_then)
                m_then();
        }
    }
    MPI_Request* data() { return m_reqs.data(); }
    void wait() override {
        if (m_done)
            return;
        blocking_scope blocked(m_op);
        RINGSCALE_MPI_CALL(
            MPI_Waitall(static_cast<int>(m_reqs.size()), m_reqs.data(), MPI_STATUSES_IGNORE));
        complete();
    }
    bool test() override {
        if (m_done)
            return true;
        int flag = 0;
        RINGSCALE_MPI_CALL(MPI_Testall(static_cast<int>(m_reqs.size()), m_reqs.data(), &flag,
                                       MPI_STATUSES_IGNORE));
        if (flag != 0)
            complete();
        return m_done;
    }

  private:
    void complete() {
        m_done = true;
        if (m_then)
            m_then();
    }

    std::vector<MPI_Request> m_reqs;
    const char* m_op; // what a wait on this request is blocked in, for the watchdog
    std::function<void()> m_then;
    bool m_done = false;
};

/// MPI_IN_PLACE for a call whose send buffer is its receive buffer.
const void* send_or_in_place(const void* send, const void* recv) {
    return send == recv ? MPI_IN_PLACE : send;
}

/// In-place reduce-scatter: MPI leaves the rank's result at the start of the buffer; move it
/// to the rank's own block (NCCL's convention).
void move_to_own_block(void* buf, std::size_t count_per_rank, dtype type, int rank) {
    const std::size_t bytes = count_per_rank * size_of(type);
    if (rank != 0 && bytes > 0)
        std::memcpy(static_cast<char*>(buf) + static_cast<std::size_t>(rank) * bytes, buf, bytes);
}

} // namespace

void mpi_check(int code, const char* call, const char* file, int line) {
    if (code == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING] = {0};
    int len = 0;
    MPI_Error_string(code, text, &len);
    throw_call_error(error_kind::mpi, call, std::string(text, static_cast<std::size_t>(len)), file,
                     line);
}

MPI_Datatype mpi_type(dtype t) {
    switch (t) {
    case dtype::f32:
        return MPI_FLOAT;
    case dtype::f64:
        return MPI_DOUBLE;
    case dtype::i32:
        return MPI_INT32_T;
    case dtype::i64:
        return MPI_INT64_T;
    case dtype::u8:
        return MPI_UINT8_T;
    case dtype::bf16:
    case dtype::f16:
        return MPI_UINT16_T; // moved as raw 16-bit words, never reduced
    }
    return MPI_BYTE;
}

mpi_communicator::mpi_communicator(MPI_Comm comm) {
    RINGSCALE_MPI_CALL(MPI_Comm_dup(comm, &m_comm));
    RINGSCALE_MPI_CALL(MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_RETURN));
    RINGSCALE_MPI_CALL(MPI_Comm_rank(m_comm, &m_rank));
    RINGSCALE_MPI_CALL(MPI_Comm_size(m_comm, &m_size));
}

mpi_communicator::~mpi_communicator() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && m_comm != MPI_COMM_NULL)
        MPI_Comm_free(&m_comm);
}

void mpi_communicator::barrier() {
    blocking_scope blocked("barrier");
    RINGSCALE_MPI_CALL(MPI_Barrier(m_comm));
}

void mpi_communicator::allreduce(const void* send, void* recv, std::size_t count, dtype type,
                                 reduce_op op) {
    blocking_scope blocked("allreduce");
    require_reducible(type);
    RINGSCALE_MPI_CALL(MPI_Allreduce(send_or_in_place(send, recv), recv, as_count(count),
                                     mpi_type(type), mpi_op(op), m_comm));
}

request_ptr mpi_communicator::iallreduce(const void* send, void* recv, std::size_t count,
                                         dtype type, reduce_op op) {
    require_reducible(type);
    auto req = std::make_unique<mpi_request>(1, "wait(iallreduce)");
    RINGSCALE_MPI_CALL(MPI_Iallreduce(send_or_in_place(send, recv), recv, as_count(count),
                                      mpi_type(type), mpi_op(op), m_comm, req->data()));
    return req;
}

void mpi_communicator::all_gather(const void* send, void* recv, std::size_t count_per_rank,
                                  dtype type) {
    blocking_scope blocked("all_gather");
    const int n = as_count(count_per_rank);
    if (in_place_all_gather(send, recv, count_per_rank, type, m_rank))
        RINGSCALE_MPI_CALL(
            MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, mpi_type(type), m_comm));
    else
        RINGSCALE_MPI_CALL(MPI_Allgather(send, n, mpi_type(type), recv, n, mpi_type(type), m_comm));
}

request_ptr mpi_communicator::iall_gather(const void* send, void* recv, std::size_t count_per_rank,
                                          dtype type) {
    const int n = as_count(count_per_rank);
    auto req = std::make_unique<mpi_request>(1, "wait(iall_gather)");
    if (in_place_all_gather(send, recv, count_per_rank, type, m_rank))
        RINGSCALE_MPI_CALL(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n,
                                          mpi_type(type), m_comm, req->data()));
    else
        RINGSCALE_MPI_CALL(
            MPI_Iallgather(send, n, mpi_type(type), recv, n, mpi_type(type), m_comm, req->data()));
    return req;
}

void mpi_communicator::reduce_scatter(const void* send, void* recv, std::size_t count_per_rank,
                                      dtype type, reduce_op op) {
    blocking_scope blocked("reduce_scatter");
    require_reducible(type);
    if (in_place_reduce_scatter(send, recv, count_per_rank, type, m_rank)) {
        void* buf = const_cast<void*>(send); // MPI_IN_PLACE: the input is the receive buffer
        RINGSCALE_MPI_CALL(MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, as_count(count_per_rank),
                                                    mpi_type(type), mpi_op(op), m_comm));
        move_to_own_block(buf, count_per_rank, type, m_rank);
        return;
    }
    RINGSCALE_MPI_CALL(MPI_Reduce_scatter_block(send, recv, as_count(count_per_rank),
                                                mpi_type(type), mpi_op(op), m_comm));
}

request_ptr mpi_communicator::ireduce_scatter(const void* send, void* recv,
                                              std::size_t count_per_rank, dtype type,
                                              reduce_op op) {
    require_reducible(type);
    if (in_place_reduce_scatter(send, recv, count_per_rank, type, m_rank)) {
        void* buf = const_cast<void*>(send); // MPI_IN_PLACE: the input is the receive buffer
        const int rank = m_rank;
        auto req = std::make_unique<mpi_request>(1, "wait(ireduce_scatter)", [=] {
            move_to_own_block(buf, count_per_rank, type, rank);
        });
        RINGSCALE_MPI_CALL(MPI_Ireduce_scatter_block(MPI_IN_PLACE, buf, as_count(count_per_rank),
                                                     mpi_type(type), mpi_op(op), m_comm,
                                                     req->data()));
        return req;
    }
    auto req = std::make_unique<mpi_request>(1, "wait(ireduce_scatter)");
    RINGSCALE_MPI_CALL(MPI_Ireduce_scatter_block(send, recv, as_count(count_per_rank),
                                                 mpi_type(type), mpi_op(op), m_comm, req->data()));
    return req;
}

void mpi_communicator::all_to_all(const void* send, void* recv, std::size_t count_per_rank,
                                  dtype type) {
    blocking_scope blocked("all_to_all");
    const int n = as_count(count_per_rank);
    if (send == recv) // MPI_IN_PLACE: the send count and type are ignored
        RINGSCALE_MPI_CALL(
            MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, mpi_type(type), m_comm));
    else
        RINGSCALE_MPI_CALL(MPI_Alltoall(send, n, mpi_type(type), recv, n, mpi_type(type), m_comm));
}

void mpi_communicator::broadcast(void* buf, std::size_t count, dtype type, int root) {
    blocking_scope blocked("broadcast");
    RINGSCALE_MPI_CALL(MPI_Bcast(buf, as_count(count), mpi_type(type), root, m_comm));
}

request_ptr mpi_communicator::isend(const void* buf, std::size_t count, dtype type, int peer,
                                    int tag) {
    auto req = std::make_unique<mpi_request>(1, "wait(isend)");
    RINGSCALE_MPI_CALL(
        MPI_Isend(buf, as_count(count), mpi_type(type), peer, tag, m_comm, req->data()));
    return req;
}

request_ptr mpi_communicator::irecv(void* buf, std::size_t count, dtype type, int peer, int tag) {
    auto req = std::make_unique<mpi_request>(1, "wait(irecv)");
    RINGSCALE_MPI_CALL(
        MPI_Irecv(buf, as_count(count), mpi_type(type), peer, tag, m_comm, req->data()));
    return req;
}

request_ptr mpi_communicator::isendrecv(const void* send, std::size_t send_count, int dest,
                                        void* recv, std::size_t recv_count, int source, dtype type,
                                        int tag) {
    auto req = std::make_unique<mpi_request>(2, "wait(isendrecv)");
    // Post the receive first so the matching send never waits for a buffer.
    RINGSCALE_MPI_CALL(
        MPI_Irecv(recv, as_count(recv_count), mpi_type(type), source, tag, m_comm, req->data()));
    RINGSCALE_MPI_CALL(
        MPI_Isend(send, as_count(send_count), mpi_type(type), dest, tag, m_comm, req->data() + 1));
    return req;
}

std::unique_ptr<communicator> mpi_communicator::split(int color, int key) {
    blocking_scope blocked("split");
    MPI_Comm sub = MPI_COMM_NULL;
    RINGSCALE_MPI_CALL(MPI_Comm_split(m_comm, color, key, &sub));
    auto result = std::make_unique<mpi_communicator>(sub);
    MPI_Comm_free(&sub);
    return result;
}

} // namespace ringscale::comm
