// Hardware instruction and cycle counts of a rank's whole process (every thread: BLAS and
// worker threads included) through perf_event_open, where the kernel allows them; where it
// does not (perf_event_paranoid, a container, no PMU), the counts are NaN and the reason is
// recorded instead.
#pragma once

#include <string>
#include <vector>

namespace ringscale {

/// Instructions and cycles retired in user space since the counters opened, summed over the
/// threads; NaN each when not supported.
struct hw_count {
    double instructions = 0;
    double cycles = 0;
};

class hw_counters {
  public:
    /// Opens an instruction and a cycle counter on every thread the process has now, each
    /// inherited by the threads it starts later. Never throws: a counter the kernel refuses
    /// makes the whole set "not supported".
    hw_counters();
    ~hw_counters();
    hw_counters(const hw_counters&) = delete;
    hw_counters& operator=(const hw_counters&) = delete;

    bool supported() const { return m_why_not.empty(); }
    /// "instructions, cycles" or "not supported: REASON" (the case's hw_counters attribute).
    std::string status() const;
    /// The counts so far (NaN when not supported).
    hw_count read() const;

  private:
    void close_all();
    std::vector<int> m_instructions, m_cycles; ///< one descriptor per thread
    std::string m_why_not;
};

/// The threads of this process (/proc/self/task), at least the calling one.
std::vector<int> process_threads();

} // namespace ringscale
