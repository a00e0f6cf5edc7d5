// Stop conditions of a launch, watched by one thread per rank: SIGTERM/SIGINT (what Slurm
// sends at a time limit), the MPI launcher gone (mpirun ended without passing a signal on) and
// the watchdog on blocking communication (--timeout). Each
// ends the whole job within seconds: rank 0 first closes the results file as incomplete,
// then the job is aborted, so every rank exits non-zero and none is left hanging.
#pragma once

#include <functional>
#include <memory>

namespace ringscale {

/// Exit codes of a launch that was stopped (0 ok, 1 a case failed, 2 bad input, 3 runtime
/// error are the launcher's own).
inline constexpr int exit_interrupted = 4;
inline constexpr int exit_timeout = 5;

class launch_guard {
  public:
    /// Install the handlers (SIGTERM, SIGINT; SIGXFSZ ignored so a file-size limit is a
    /// write error, not a kill) and start the watchdog. `timeout_s`: longest blocking wait.
    launch_guard(int rank, double timeout_s);
    /// Stop the watchdog and restore the default handlers.
    ~launch_guard();
    launch_guard(const launch_guard&) = delete;
    launch_guard& operator=(const launch_guard&) = delete;

    /// Case shown in the timeout message (-1: none running).
    void set_case(int index);
    /// What to do before aborting (rank 0: close the results file incomplete); runs on the
    /// watchdog thread, so it must be safe against the main thread. Empty to clear.
    void set_before_abort(std::function<void()> fn);
    /// Run `create` (on this thread) with a stop held off until it returns (the watchdog waits
    /// up to 5 s), then install the hook it returns: a results file is never cut between its
    /// creation and its first flush. An exception from `create` leaves the hook unchanged.
    void set_before_abort_after(const std::function<std::function<void()>()>& create);

  private:
    struct state;
    std::unique_ptr<state> m;
};

} // namespace ringscale
