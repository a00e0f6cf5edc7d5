// A communicator wrapper for tests that counts the bytes this rank sends, so a job's declared
// comm_bytes_per_iter can be checked against what it really sends.
#pragma once

#include "comm/communicator.hpp"

#include <cstdint>
#include <memory>

namespace ringscale::testing_support {

// Wraps a communicator and counts the bytes this rank sends: all_gather, reduce_scatter and
// all_to_all send count_per_rank to each of the other P-1 ranks; isend and isendrecv their
// send count. Calls whose bytes are ambiguous (allreduce's algorithm, broadcast) are only
// counted as calls. Sub-communicators from split() report to the same counters.
class counting_communicator final : public comm::communicator {
  public:
    struct counters {
        std::uint64_t bytes = 0, uncounted = 0;
    };
    explicit counting_communicator(comm::communicator& inner,
                                   std::shared_ptr<counters> c = std::make_shared<counters>())
        : m_inner(inner), m_c(std::move(c)) {}

    void reset() { *m_c = counters(); }
    std::uint64_t bytes_sent() const { return m_c->bytes; }
    std::uint64_t uncounted_calls() const { return m_c->uncounted; }

    int rank() const override { return m_inner.rank(); }
    int size() const override { return m_inner.size(); }
    comm_kind backend() const override { return m_inner.backend(); }
    comm::memory_space memory() const override { return m_inner.memory(); }
    void barrier() override { m_inner.barrier(); }
    void allreduce(const void* s, void* r, std::size_t n, comm::dtype t,
                   comm::reduce_op op) override {
        ++m_c->uncounted;
        m_inner.allreduce(s, r, n, t, op);
    }
    comm::request_ptr iallreduce(const void* s, void* r, std::size_t n, comm::dtype t,
                                 comm::reduce_op op) override {
        ++m_c->uncounted;
        return m_inner.iallreduce(s, r, n, t, op);
    }
    void all_gather(const void* s, void* r, std::size_t n, comm::dtype t) override {
        to_others(n, t);
        m_inner.all_gather(s, r, n, t);
    }
    comm::request_ptr iall_gather(const void* s, void* r, std::size_t n, comm::dtype t) override {
        to_others(n, t);
        return m_inner.iall_gather(s, r, n, t);
    }
    void reduce_scatter(const void* s, void* r, std::size_t n, comm::dtype t,
                        comm::reduce_op op) override {
        to_others(n, t);
        m_inner.reduce_scatter(s, r, n, t, op);
    }
    comm::request_ptr ireduce_scatter(const void* s, void* r, std::size_t n, comm::dtype t,
                                      comm::reduce_op op) override {
        to_others(n, t);
        return m_inner.ireduce_scatter(s, r, n, t, op);
    }
    void all_to_all(const void* s, void* r, std::size_t n, comm::dtype t) override {
        to_others(n, t);
        m_inner.all_to_all(s, r, n, t);
    }
    void broadcast(void* b, std::size_t n, comm::dtype t, int root) override {
        ++m_c->uncounted;
        m_inner.broadcast(b, n, t, root);
    }
    comm::request_ptr isend(const void* b, std::size_t n, comm::dtype t, int peer,
                            int tag) override {
        m_c->bytes += n * comm::size_of(t);
        return m_inner.isend(b, n, t, peer, tag);
    }
    comm::request_ptr irecv(void* b, std::size_t n, comm::dtype t, int peer, int tag) override {
        return m_inner.irecv(b, n, t, peer, tag);
    }
    comm::request_ptr isendrecv(const void* s, std::size_t sn, int dest, void* r, std::size_t rn,
                                int source, comm::dtype t, int tag) override {
        m_c->bytes += sn * comm::size_of(t);
        return m_inner.isendrecv(s, sn, dest, r, rn, source, t, tag);
    }
    std::unique_ptr<comm::communicator> split(int color, int key) override {
        auto owned = std::shared_ptr<comm::communicator>(m_inner.split(color, key));
        auto out = std::make_unique<counting_communicator>(*owned, m_c);
        out->m_owned = std::move(owned);
        return out;
    }

  private:
    void to_others(std::size_t n, comm::dtype t) {
        m_c->bytes += n * comm::size_of(t) * static_cast<std::uint64_t>(size() - 1);
    }
    comm::communicator& m_inner;
    std::shared_ptr<counters> m_c;
    std::shared_ptr<comm::communicator> m_owned; // the split result this one wraps
};

} // namespace ringscale::testing_support
