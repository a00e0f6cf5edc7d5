#include "jobs/schemes/ring_allreduce.hpp"
#include "jobs/schemes/ring_rounds.hpp"

namespace ringscale::jobs::schemes {

namespace {

// Reduce-scatter round s (0 .. P-2): rank r sends block (r-s-1) mod P (its own input at s = 0,
// then the partial sum it holds in `recv`) to r+1 and receives from r-1 the partial sum of
// block (r-s-2) mod P into `recv`, to which it adds its own input block; after round P-2 it
// holds the whole sum of block r. All-gather round s: it sends the whole block (r-s) mod P to
// r+1 and receives block (r-s-1) mod P from r-1. Every block lands in its own place in `recv`,
// so no scratch is needed.
class ring_allreduce_request final : public ring_rounds<ring_allreduce_request> {
  public:
    ring_allreduce_request(comm::communicator& c, const float* send, float* recv, std::size_t n,
                           int tag)
        : m_c(c), m_send(send), m_recv(recv), m_n(n), m_tag(tag), m_p(c.size()), m_r(c.rank()) {
        if (!alone(c, send, recv, n))
            post();
    }
    ~ring_allreduce_request() override { complete_on_destruction(); }

  private:
    friend class ring_rounds<ring_allreduce_request>;

    int block(int k) const { return ((k % m_p) + m_p) % m_p; }
    std::size_t start(int k) const {
        return m_n * static_cast<std::size_t>(k) / static_cast<std::size_t>(m_p);
    }
    std::size_t size(int k) const { return start(k + 1) - start(k); }
    bool reducing() const { return m_round < m_p - 1; }

    void post() {
        const int s = reducing() ? m_round : m_round - (m_p - 1);
        const int out = reducing() ? block(m_r - s - 1) : block(m_r - s);
        const int in = reducing() ? block(m_r - s - 2) : block(m_r - s - 1);
        const float* from = reducing() && s == 0 ? m_send : m_recv;
        m_inflight =
            m_c.isendrecv(from + start(out), size(out), (m_r + 1) % m_p, m_recv + start(in),
                          size(in), (m_r + m_p - 1) % m_p, comm::dtype::f32, m_tag);
    }
    // The round's exchange is complete: while reducing, add this rank's input to the block that
    // arrived; start the next round.
    void advance() {
        m_inflight.reset();
        if (reducing()) {
            const int in = block(m_r - m_round - 2);
            float* got = m_recv + start(in);
            const float* own = m_send + start(in);
            for (std::size_t i = 0, e = size(in); i < e; ++i)
                got[i] += own[i];
        }
        if (++m_round == 2 * (m_p - 1)) {
            m_done = true;
            return;
        }
        post();
    }

    comm::communicator& m_c;
    const float* m_send;
    float* m_recv;
    std::size_t m_n;
    int m_tag, m_p, m_r;
    int m_round = 0;
};

} // namespace

std::size_t ring_allreduce_floats_sent(std::size_t n, int ranks, int rank) {
    if (ranks <= 1)
        return 0;
    const auto p = static_cast<std::size_t>(ranks);
    auto size = [&](int k) {
        const auto b = static_cast<std::size_t>(k % ranks);
        return n * (b + 1) / p - n * b / p;
    };
    return 2 * n - size(rank) - size(rank + 1);
}

comm::request_ptr ring_allreduce(comm::communicator& c, const float* send, float* recv,
                                 std::size_t n, int tag) {
    return std::make_unique<ring_allreduce_request>(c, send, recv, n, tag);
}

} // namespace ringscale::jobs::schemes
