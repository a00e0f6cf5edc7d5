// Monotonic timing: the clock every rank uses, its measured resolution and overhead,
// and the per-phase accumulator a job fills during one iteration.
#pragma once

#include <array>
#include <chrono>
#include <ctime>
#include <limits>

namespace ringscale {

/// Seconds on the monotonic clock (std::chrono::steady_clock); only differences matter.
inline double now_s() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

/// CPU seconds of the whole process: every thread's (BLAS and worker threads included),
/// CLOCK_PROCESS_CPUTIME_ID; NaN where the clock cannot be read. Only differences matter.
inline double process_cpu_s() {
    timespec ts{};
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
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

/// Accumulates per-phase seconds within one iteration, wall time and the process's CPU time
/// beside it (every thread's: a compute phase on a busy machine keeps its CPU time when its
/// wall time stretches). Jobs time with `scope`; add() (device-timed phases) adds wall time
/// only.
class phase_timer {
  public:
    void reset() { m_wall = m_cpu = {}; }
    void add(phase p, double seconds) { m_wall[index(p)] += seconds; }
    void add_cpu(phase p, double seconds) { m_cpu[index(p)] += seconds; }
    double compute_s() const { return m_wall[0]; }
    double comm_wait_s() const { return m_wall[1]; }
    double compute_cpu_s() const { return m_cpu[0]; }
    double comm_wait_cpu_s() const { return m_cpu[1]; }

    /// RAII: adds the time between construction and destruction to one phase.
    class scope {
      public:
        scope(phase_timer& t, phase p)
            : m_t(t), m_p(p), m_start(now_s()), m_cpu_start(process_cpu_s()) {}
        ~scope() {
            m_t.add(m_p, now_s() - m_start);
            m_t.add_cpu(m_p, process_cpu_s() - m_cpu_start);
        }
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;

      private:
        phase_timer& m_t;
        phase m_p;
        double m_start;
        double m_cpu_start;
    };
    scope time(phase p) { return scope(*this, p); }

  private:
    static int index(phase p) { return p == phase::compute ? 0 : 1; }
    std::array<double, 2> m_wall{}; ///< compute, comm_wait
    std::array<double, 2> m_cpu{};
};

} // namespace ringscale
