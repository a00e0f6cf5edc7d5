// Compile-checked against CUDA 13 headers; not yet run on a GPU.
#include "comm/mpi_staged_communicator.hpp"

#include "comm/blocking.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <cuda_runtime.h>

namespace ringscale::comm {

namespace {

cudaStream_t as_stream(const std::shared_ptr<void>& s) {
    return static_cast<cudaStream_t>(s.get());
}

void copy_to_device(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
    if (bytes == 0)
        return;
    RINGSCALE_CUDA_CALL(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    RINGSCALE_CUDA_CALL(cudaStreamSynchronize(stream));
}

/// An MPI request on pinned blocks; completing it copies the received block to the device.
class staged_request final : public request {
  public:
    staged_request(request_ptr inner, pinned_block send_block, pinned_block recv_block,
                   void* recv_device, std::size_t recv_bytes, std::size_t recv_offset,
                   std::shared_ptr<void> stream)
        : m_send(std::move(send_block)), m_recv(std::move(recv_block)), m_inner(std::move(inner)),
          m_recv_device(recv_device), m_recv_bytes(recv_bytes), m_recv_offset(recv_offset),
          m_stream(std::move(stream)) {}
    ~staged_request() override {
        // Destroying an unfinished request waits for it, copy included; errors cannot leave a
        // destructor, and a failed CUDA copy resurfaces at the next checked CUDA call.
        if (!m_done) {
            try {
                wait();
            } catch (...) {
            }
        }
    }
    staged_request(const staged_request&) = delete;
    staged_request& operator=(const staged_request&) = delete;

    void wait() override {
        if (m_done)
            return;
        m_inner->wait();
        finish();
    }
    bool test() override {
        if (m_done)
            return true;
        if (!m_inner->test())
            return false;
        finish();
        return true;
    }

  private:
    void finish() {
        m_done = true; // set first: a failed copy must not be retried by the destructor
        copy_to_device(m_recv_device, static_cast<char*>(m_recv.data()) + m_recv_offset,
                       m_recv_bytes, as_stream(m_stream));
    }

    // Declared before m_inner so they are destroyed after it: MPI may use them until then.
    pinned_block m_send;
    pinned_block m_recv;
    request_ptr m_inner;
    void* m_recv_device;
    std::size_t m_recv_bytes;
    std::size_t m_recv_offset; // where in m_recv the device's data starts
    std::shared_ptr<void> m_stream;
    bool m_done = false;
};

std::size_t bytes_of(std::size_t count, dtype type) {
    return count * size_of(type);
}

void* at(const pinned_block& block, std::size_t offset) {
    return static_cast<char*>(block.data()) + offset;
}

} // namespace

mpi_staged_communicator::mpi_staged_communicator(MPI_Comm comm)
    : m_mpi(std::make_unique<mpi_communicator>(comm)), m_pool(std::make_shared<pinned_pool>()) {
    // A blocking stream (not cudaStreamNonBlocking): ordered after legacy-default-stream work.
    cudaStream_t stream = nullptr;
    RINGSCALE_CUDA_CALL(cudaStreamCreate(&stream));
    m_stream = std::shared_ptr<void>(stream, [](void* s) {
        cudaStreamSynchronize(static_cast<cudaStream_t>(s)); // never throws
        cudaStreamDestroy(static_cast<cudaStream_t>(s));
    });
}

mpi_staged_communicator::~mpi_staged_communicator() = default;

pinned_block mpi_staged_communicator::stage_in(const void* device, std::size_t bytes) {
    pinned_block block = m_pool->acquire(bytes);
    stage_into(block.data(), device, bytes);
    return block;
}

void mpi_staged_communicator::stage_into(void* host, const void* device, std::size_t bytes) {
    if (bytes == 0)
        return;
    const cudaStream_t s = as_stream(m_stream);
    RINGSCALE_CUDA_CALL(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, s));
    RINGSCALE_CUDA_CALL(cudaStreamSynchronize(s));
}

pinned_block mpi_staged_communicator::stage_own_block(const void* send, std::size_t block) {
    // In-place all-gather: the rank's input is its block of the output; stage it there.
    pinned_block all = m_pool->acquire(block * static_cast<std::size_t>(size()));
    stage_into(at(all, block * static_cast<std::size_t>(rank())), send, block);
    return all;
}

void mpi_staged_communicator::stage_out(void* device, const void* host, std::size_t bytes) {
    copy_to_device(device, host, bytes, as_stream(m_stream));
}

request_ptr mpi_staged_communicator::deferred(request_ptr inner, pinned_block send_block,
                                              pinned_block recv_block, void* recv_device,
                                              std::size_t recv_bytes, std::size_t recv_offset) {
    return std::make_unique<staged_request>(std::move(inner), std::move(send_block),
                                            std::move(recv_block), recv_device, recv_bytes,
                                            recv_offset, m_stream);
}

void mpi_staged_communicator::barrier() {
    m_mpi->barrier();
}

void mpi_staged_communicator::allreduce(const void* send, void* recv, std::size_t count, dtype type,
                                        reduce_op op) {
    const std::size_t bytes = bytes_of(count, type);
    const pinned_block in = stage_in(send, bytes);
    // In place: one pinned block, reduced in place by MPI.
    const pinned_block out = send == recv ? pinned_block{} : m_pool->acquire(bytes);
    void* result = send == recv ? in.data() : out.data();
    m_mpi->allreduce(in.data(), result, count, type, op);
    stage_out(recv, result, bytes);
}

request_ptr mpi_staged_communicator::iallreduce(const void* send, void* recv, std::size_t count,
                                                dtype type, reduce_op op) {
    const std::size_t bytes = bytes_of(count, type);
    pinned_block in = stage_in(send, bytes);
    if (send == recv) { // in place: one pinned block
        request_ptr inner = m_mpi->iallreduce(in.data(), in.data(), count, type, op);
        return deferred(std::move(inner), pinned_block{}, std::move(in), recv, bytes);
    }
    pinned_block out = m_pool->acquire(bytes);
    request_ptr inner = m_mpi->iallreduce(in.data(), out.data(), count, type, op);
    return deferred(std::move(inner), std::move(in), std::move(out), recv, bytes);
}

void mpi_staged_communicator::all_gather(const void* send, void* recv, std::size_t count_per_rank,
                                         dtype type) {
    const std::size_t block = bytes_of(count_per_rank, type);
    const std::size_t total = block * static_cast<std::size_t>(size());
    if (in_place_all_gather(send, recv, count_per_rank, type, rank())) {
        const pinned_block all = stage_own_block(send, block);
        m_mpi->all_gather(at(all, block * static_cast<std::size_t>(rank())), all.data(),
                          count_per_rank, type);
        stage_out(recv, all.data(), total);
        return;
    }
    const pinned_block in = stage_in(send, block);
    const pinned_block out = m_pool->acquire(total);
    m_mpi->all_gather(in.data(), out.data(), count_per_rank, type);
    stage_out(recv, out.data(), total);
}

request_ptr mpi_staged_communicator::iall_gather(const void* send, void* recv,
                                                 std::size_t count_per_rank, dtype type) {
    const std::size_t block = bytes_of(count_per_rank, type);
    const std::size_t total = block * static_cast<std::size_t>(size());
    if (in_place_all_gather(send, recv, count_per_rank, type, rank())) {
        pinned_block all = stage_own_block(send, block);
        request_ptr inner = m_mpi->iall_gather(at(all, block * static_cast<std::size_t>(rank())),
                                               all.data(), count_per_rank, type);
        return deferred(std::move(inner), pinned_block{}, std::move(all), recv, total);
    }
    pinned_block in = stage_in(send, block);
    pinned_block out = m_pool->acquire(total);
    request_ptr inner = m_mpi->iall_gather(in.data(), out.data(), count_per_rank, type);
    return deferred(std::move(inner), std::move(in), std::move(out), recv, total);
}

void mpi_staged_communicator::reduce_scatter(const void* send, void* recv,
                                             std::size_t count_per_rank, dtype type, reduce_op op) {
    const std::size_t block = bytes_of(count_per_rank, type);
    const pinned_block in = stage_in(send, block * static_cast<std::size_t>(size()));
    if (in_place_reduce_scatter(send, recv, count_per_rank, type, rank())) {
        // In place on the pinned copy too; only the rank's own block goes back to the device.
        void* own = at(in, block * static_cast<std::size_t>(rank()));
        m_mpi->reduce_scatter(in.data(), own, count_per_rank, type, op);
        stage_out(recv, own, block);
        return;
    }
    const pinned_block out = m_pool->acquire(block);
    m_mpi->reduce_scatter(in.data(), out.data(), count_per_rank, type, op);
    stage_out(recv, out.data(), block);
}

request_ptr mpi_staged_communicator::ireduce_scatter(const void* send, void* recv,
                                                     std::size_t count_per_rank, dtype type,
                                                     reduce_op op) {
    const std::size_t block = bytes_of(count_per_rank, type);
    pinned_block in = stage_in(send, block * static_cast<std::size_t>(size()));
    if (in_place_reduce_scatter(send, recv, count_per_rank, type, rank())) {
        const std::size_t own = block * static_cast<std::size_t>(rank());
        request_ptr inner =
            m_mpi->ireduce_scatter(in.data(), at(in, own), count_per_rank, type, op);
        return deferred(std::move(inner), pinned_block{}, std::move(in), recv, block, own);
    }
    pinned_block out = m_pool->acquire(block);
    request_ptr inner = m_mpi->ireduce_scatter(in.data(), out.data(), count_per_rank, type, op);
    return deferred(std::move(inner), std::move(in), std::move(out), recv, block);
}

void mpi_staged_communicator::all_to_all(const void* send, void* recv, std::size_t count_per_rank,
                                         dtype type) {
    const std::size_t total = bytes_of(count_per_rank, type) * static_cast<std::size_t>(size());
    const pinned_block in = stage_in(send, total);
    if (send == recv) { // in place: MPI_IN_PLACE on the one pinned copy
        m_mpi->all_to_all(in.data(), in.data(), count_per_rank, type);
        stage_out(recv, in.data(), total);
        return;
    }
    const pinned_block out = m_pool->acquire(total);
    m_mpi->all_to_all(in.data(), out.data(), count_per_rank, type);
    stage_out(recv, out.data(), total);
}

void mpi_staged_communicator::broadcast(void* buf, std::size_t count, dtype type, int root) {
    const std::size_t bytes = bytes_of(count, type);
    // Only the root's device data matters; the others receive into the pinned block.
    const pinned_block block = rank() == root ? stage_in(buf, bytes) : m_pool->acquire(bytes);
    m_mpi->broadcast(block.data(), count, type, root);
    if (rank() != root)
        stage_out(buf, block.data(), bytes);
}

request_ptr mpi_staged_communicator::isend(const void* buf, std::size_t count, dtype type, int peer,
                                           int tag) {
    pinned_block in = stage_in(buf, bytes_of(count, type));
    request_ptr inner = m_mpi->isend(in.data(), count, type, peer, tag);
    return deferred(std::move(inner), std::move(in), pinned_block{}, nullptr, 0);
}

request_ptr mpi_staged_communicator::irecv(void* buf, std::size_t count, dtype type, int peer,
                                           int tag) {
    const std::size_t bytes = bytes_of(count, type);
    pinned_block out = m_pool->acquire(bytes);
    request_ptr inner = m_mpi->irecv(out.data(), count, type, peer, tag);
    return deferred(std::move(inner), pinned_block{}, std::move(out), buf, bytes);
}

request_ptr mpi_staged_communicator::isendrecv(const void* send, std::size_t send_count, int dest,
                                               void* recv, std::size_t recv_count, int source,
                                               dtype type, int tag) {
    const std::size_t recv_bytes = bytes_of(recv_count, type);
    pinned_block in = stage_in(send, bytes_of(send_count, type));
    pinned_block out = m_pool->acquire(recv_bytes);
    request_ptr inner =
        m_mpi->isendrecv(in.data(), send_count, dest, out.data(), recv_count, source, type, tag);
    return deferred(std::move(inner), std::move(in), std::move(out), recv, recv_bytes);
}

std::unique_ptr<communicator> mpi_staged_communicator::split(int color, int key) {
    blocking_scope blocked("split");
    MPI_Comm sub = MPI_COMM_NULL;
    RINGSCALE_MPI_CALL(MPI_Comm_split(m_mpi->handle(), color, key, &sub));
    auto result = std::make_unique<mpi_staged_communicator>(sub);
    MPI_Comm_free(&sub);
    return result;
}

std::unique_ptr<communicator> make_mpi_staged_world() {
    if (cuda_runtime::cuda_device_count() == 0)
        throw config_error("--comm mpi with --device cuda: no CUDA device is visible to this "
                           "process (check CUDA_VISIBLE_DEVICES and the driver)");
    return std::make_unique<mpi_staged_communicator>(MPI_COMM_WORLD);
}

} // namespace ringscale::comm
