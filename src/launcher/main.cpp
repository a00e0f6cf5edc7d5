// ringscale: parse -> build -> run -> write. The launcher (src/launcher/) on the engine
// (src/engine/).
#include "src/engine/results_probe.hpp"
#include "src/launcher/blas_restart.hpp"
#include "src/launcher/crash_report.hpp"
#include "src/launcher/launcher.hpp"

#include <cstring>

int main(int argc, char** argv) {
    // A fault before Open MPI has a handler of its own: one line and the stack, not silence.
    ringscale::install_crash_report();
    // --resume's probe of a prior results file: a child of the launcher itself, before (and
    // without) MPI_Init (src/engine/results_probe.hpp).
    if (argc == 3 && std::strcmp(argv[1], ringscale::probe_results_flag) == 0)
        return ringscale::probe_results_main(argv[2]);
    // OpenBLAS's kernels are chosen as it loads: a restart is the only way to change them.
    ringscale::restart_with_suited_blas_core(argv);
    return ringscale::run_launcher(argc, argv);
}
