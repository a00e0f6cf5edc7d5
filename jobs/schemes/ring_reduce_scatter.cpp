#include "jobs/schemes/ring_reduce_scatter.hpp"
#include "jobs/schemes/ring_rounds.hpp"

namespace ringscale::jobs::schemes {

namespace {

// Round s (0 .. P-2): rank r sends to r+1 the partial sum of block (r-s-1) mod P (at s = 0 its
// own input block) and receives from r-1 the partial of block (r-s-2) mod P, to which it adds
// its own input block. After round P-2 it holds the whole sum of block r, received straight
// into `recv`; earlier rounds alternate between two scratch pieces.
class ring_request final : public ring_rounds<ring_request> {
  public:
    ring_request(comm::communicator& c, const float* send, float* recv, std::size_t n,
                 float* scratch, int tag)
        : m_c(c), m_send(send), m_recv(recv), m_scratch(scratch), m_n(n), m_tag(tag), m_p(c.size()),
          m_r(c.rank()) {
        if (!alone(c, send, recv, n))
            post();
    }
    ~ring_request() override { complete_on_destruction(); }

  private:
    friend class ring_rounds<ring_request>;

    std::size_t block(int k) const { return static_cast<std::size_t>(((k % m_p) + m_p) % m_p); }
    bool last() const { return m_round == m_p - 2; }
    float* partial(int s) const { return m_scratch + static_cast<std::size_t>(s % 2) * m_n; }
    const float* sent() const {
        return m_round == 0 ? m_send + block(m_r - 1) * m_n : partial(m_round - 1);
    }
    float* target() const { return last() ? m_recv : partial(m_round); }

    void post() {
        m_inflight = m_c.isendrecv(sent(), m_n, (m_r + 1) % m_p, target(), m_n,
                                   (m_r + m_p - 1) % m_p, comm::dtype::f32, m_tag);
    }
    // The round's exchange is complete: add this rank's block, start the next round.
    void advance() {
        m_inflight.reset();
        float* got = target();
        const float* own = m_send + block(m_r - m_round - 2) * m_n;
        for (std::size_t i = 0; i < m_n; ++i)
            got[i] += own[i];
        if (last()) {
            m_done = true;
            return;
        }
        ++m_round;
        post();
    }

    comm::communicator& m_c;
    const float* m_send;
    float* m_recv;
    float* m_scratch;
    std::size_t m_n;
    int m_tag, m_p, m_r;
    int m_round = 0;
};

} // namespace

std::size_t ring_scratch_floats(std::size_t count_per_rank, int ranks) {
    return ranks > 2 ? 2 * count_per_rank : 0;
}

comm::request_ptr ring_reduce_scatter(comm::communicator& c, const float* send, float* recv,
                                      std::size_t count_per_rank, float* scratch, int tag) {
    return std::make_unique<ring_request>(c, send, recv, count_per_rank, scratch, tag);
}

} // namespace ringscale::jobs::schemes
