// OpenBLAS with DYNAMIC_ARCH picks its kernels once, as the library loads, from cpuid or from
// OPENBLAS_CORETYPE. A CPU model it does not know gets a pre-AVX fallback core: Debian 12's
// OpenBLAS 0.3.21 runs its SSE3 "Prescott" sgemm on the family 6 model 207 Xeon, and a
// training step takes 3.5x as long as with its AVX-512 "SkylakeX" kernels. The
// launcher then restarts itself, before MPI_Init, with OPENBLAS_CORETYPE naming the core that
// suits the CPU. A user who sets OPENBLAS_CORETYPE keeps that choice.
#pragma once
#include <string>

namespace ringscale {

/// Set in the restarted launcher's environment: "CORE@PID", the core OpenBLAS chose at first
/// and the pid of the process that restarted (exec keeps it). Its mere presence keeps a
/// launcher from restarting again; only the mark of this very process makes the note.
inline constexpr const char* blas_restart_env = "RINGSCALE_BLAS_RESTARTED";

/// Where OpenBLAS runs a generic core on a CPU with AVX2 or AVX-512, OPENBLAS_CORETYPE is
/// unset and this process was not restarted already: execs /proc/self/exe with the same
/// arguments and OPENBLAS_CORETYPE set (kernels::suited_blas_core). Returns when no restart
/// is needed, or when the exec fails (the launch then warns about the core, as before).
/// Call first thing in main(), before MPI_Init and before any thread starts.
void restart_with_suited_blas_core(char** argv);

/// The note a restarted launcher keeps in /meta warnings and prints once: which core OpenBLAS
/// chose, which one it runs now and how to choose another; "" when this process was not
/// restarted (no mark, or one inherited: empty, or another process's).
std::string blas_restart_note();

/// The core named in `mark` when it is this restart's mark for process `pid`, else "". Pure.
std::string restarted_from(const char* mark, long pid);

} // namespace ringscale
