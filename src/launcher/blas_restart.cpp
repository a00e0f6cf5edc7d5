#include "src/launcher/blas_restart.hpp"

#include "kernels/blas_core.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <unistd.h>

namespace ringscale {

void restart_with_suited_blas_core(char** argv) {
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr || std::getenv(blas_restart_env) != nullptr)
        return;
    const std::string chosen = kernels::blas_core();
    const std::string pick = kernels::suited_blas_core(chosen, kernels::this_cpu_isa());
    if (pick.empty())
        return;
    // The mark names this process: exec keeps the pid, so only the restarted launcher itself
    // reads its own pid there (a value inherited from a parent or set by hand never does).
    const std::string mark = fmt::format("{}@{}", chosen, static_cast<long>(getpid()));
    if (setenv(blas_restart_env, mark.c_str(), 1) != 0 ||
        setenv("OPENBLAS_CORETYPE", pick.c_str(), 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    // The exec failed: run on with OpenBLAS's own choice, which the launch warns about.
    unsetenv("OPENBLAS_CORETYPE");
}

std::string restarted_from(const char* mark, long pid) {
    const std::string m = mark ? mark : "";
    const std::string tail = fmt::format("@{}", pid);
    if (m.size() <= tail.size() || m.compare(m.size() - tail.size(), tail.size(), tail) != 0)
        return "";
    return m.substr(0, m.size() - tail.size());
}

std::string blas_restart_note() {
    const std::string was =
        restarted_from(std::getenv(blas_restart_env), static_cast<long>(getpid()));
    const char* now = std::getenv("OPENBLAS_CORETYPE");
    if (was.empty() || now == nullptr)
        return "";
    return fmt::format("ringscale: note: OpenBLAS chose its '{}' kernels for this CPU; the "
                       "launcher restarted with OPENBLAS_CORETYPE={} and runs its '{}' kernels "
                       "(set OPENBLAS_CORETYPE yourself to choose the core)",
                       was, now, kernels::blas_core());
}

} // namespace ringscale
