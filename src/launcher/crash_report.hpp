// A rank that dies of a fault signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) before Open MPI
// has put its own handler in place (it does so inside MPI_Init) would end without a word: srun or
// mpirun then says only that a task died. The crash report prints one line naming the task, the
// signal, the faulting address and where the launch was, then the stack, and ends the process by
// the same signal, so the launcher's exit status and core-dump settings are what they were.
#pragma once

namespace ringscale {

/// Where a launch is, for the report's line.
enum class launch_stage : int { start_up = 0, mpi_init = 1, running = 2 };

/// Install the report for the fault signals. The task is read now from the launcher's
/// environment (OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID: the first that is a number; else
/// "?"). Only async-signal-safe calls run in the handler. Idempotent.
void install_crash_report();

/// Whether install_crash_report installs anything: not in a build with AddressSanitizer or
/// ThreadSanitizer, whose own handlers report faults with more than a stack.
bool crash_report_installs();

/// Record where the launch is: the next report names it.
void set_crash_stage(launch_stage stage);

} // namespace ringscale
