// The request the schemes' own ring collectives return (ring_allreduce, ring_reduce_scatter):
// one isendrecv in flight at a time; when it completes, the collective's advance() adds what
// arrived and posts the next round, or marks the request done. wait() and test() drive those
// rounds, so a caller that tests between its computations moves the collective along.
#pragma once

#include "comm/communicator.hpp"

#include <algorithm>
#include <cstddef>

namespace ringscale::jobs::schemes {

/// Derived: `void advance()`, called with m_inflight complete; it posts the next round into
/// m_inflight or sets m_done. CRTP rather than a virtual advance(): the calls are direct.
template <class Derived>
class ring_rounds : public comm::request {
  public:
    void wait() override {
        while (!m_done) {
            m_inflight->wait();
            self().advance();
        }
    }
    bool test() override {
        while (!m_done && m_inflight->test())
            self().advance();
        return m_done;
    }

  protected:
    /// On one rank the collective is a copy: `recv` [n] = `send` [n], done at once.
    bool alone(const comm::communicator& c, const float* send, float* recv, std::size_t n) {
        if (c.size() != 1)
            return false;
        std::copy(send, send + n, recv);
        m_done = true;
        return true;
    }
    /// For Derived's destructor: as the communicator's requests, destroying an unfinished one
    /// completes it. (This base's destructor cannot: Derived's advance() is gone by then.)
    void complete_on_destruction() noexcept {
        try {
            wait();
        } catch (...) { // an error already being reported; the rank is going down
        }
    }

    comm::request_ptr m_inflight;
    bool m_done = false;

  private:
    Derived& self() { return static_cast<Derived&>(*this); }
};

} // namespace ringscale::jobs::schemes
