// The launcher's whole life: parse -> agree -> plan -> run -> write. main() only calls this.
#pragma once

namespace ringscale {

/// Run a launch; returns the process exit code (0 ok, 1 a case failed, 2 bad input).
/// Initialises and finalises MPI. Runtime errors abort the MPI job (exit code 3).
int run_launcher(int argc, char** argv);

} // namespace ringscale
