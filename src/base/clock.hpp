// Monotonic timing: the clock every rank uses, its measured resolution and overhead,
// and the per-phase accumulator a job fills during one iteration.
#pragma once

#include <chrono>

namespace ringscale {

/// Seconds on the monotonic clock (std::chrono::steady_clock); only differences matter.
inline double now_s() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

/// Measured properties of now_s(): the smallest nonzero step and the cost of one read.
struct timer_info {
    double resolution_s = 0;
    double overhead_s = 0;
};

/// Measure the clock once (a few milliseconds of work). Not collective.
timer_info measure_timer();

/// The phases an iteration's time is split into (communication wait = blocked on comm).
enum class phase { compute, comm_wait };

/// Accumulates per-phase seconds within one iteration. Jobs time with `scope`.
class phase_timer {
  public:
    void reset() { m_compute_s = m_comm_wait_s = 0; }
    void add(phase p, double seconds) {
        (p == phase::compute ? m_compute_s : m_comm_wait_s) += seconds;
    }
    double compute_s() const { return m_compute_s; }
    double comm_wait_s() const { return m_comm_wait_s; }

    /// RAII: adds the time between construction and destruction to one phase.
    class scope {
      public:
        scope(phase_timer& t, phase p) : m_t(t), m_p(p), m_start(now_s()) {}
        ~scope() { m_t.add(m_p, now_s() - m_start); }
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;

      private:
        phase_timer& m_t;
        phase m_p;
        double m_start;
    };
    scope time(phase p) { return scope(*this, p); }

  private:
    double m_compute_s = 0;
    double m_comm_wait_s = 0;
};

} // namespace ringscale
