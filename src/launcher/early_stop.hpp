// SIGTERM or SIGINT before a launch's guard is in place (src/engine/guard.hpp): the first
// moments of a launch (MPI start-up, parsing, planning, --resume reading prior files) hold no
// results file yet, so the rank only has to say so and end with the launch's "stopped" exit
// code, not die silently by the signal (exit 143).
#pragma once

namespace ringscale {

/// Install the early handlers: a stop signal then prints one line (on rank 0, or on every
/// rank while the rank is not known) and ends this process with exit code 4
/// (exit_interrupted). Call first thing in a launch; launch_guard replaces them. Only
/// async-signal-safe calls run in the handler.
void install_early_stop();

/// This process's rank, once known: only rank 0 prints the line from then on.
void set_early_stop_rank(int rank);

/// Restore the default action of SIGTERM and SIGINT, once the launch's outcome is decided
/// (before MPI_Finalize or MPI_Abort): the launcher (mpiexec, srun) then ends the ranks still
/// finishing with SIGTERM, and they have nothing left to say.
void uninstall_early_stop();

} // namespace ringscale
