#include "blas_core.hpp"

#include "kernels/cpu/linear_gemm.hpp"

#include <algorithm>
#include <array>
#include <cblas.h>
#include <fmt/format.h>

namespace ringscale::kernels {

cpu_vector_isa this_cpu_isa() {
    cpu_vector_isa isa;
#if defined(__x86_64__)
    __builtin_cpu_init();
    isa.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    // SkylakeX's kernels use the BW, DQ and VL extensions too (a Xeon Phi has F alone).
    isa.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    return isa;
}

std::string linear_gemm() {
    return cpu::gemm_impl_name(cpu::linear_gemm_impl());
}

std::string blas_core() {
    const char* name = openblas_get_corename();
    return name == nullptr ? std::string() : std::string(name);
}

std::string suited_blas_core(const std::string& core, cpu_vector_isa isa) {
    // OpenBLAS's x86 cores from before AVX (its generic fallbacks for CPUs it does not know).
    static const std::array<const char*, 11> old = {
        "Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Core2",
        "Penryn", "Dunnington", "Nehalem",   "Atom",     "Opteron"};
    std::string lower = core;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool generic = std::any_of(old.begin(), old.end(), [&](const char* o) {
        std::string n = o;
        std::transform(n.begin(), n.end(), n.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return lower == n;
    });
    if (!generic || !(isa.avx2 || isa.avx512))
        return "";
    return isa.avx512 ? "SkylakeX" : "Haswell";
}

std::string blas_core_warning(const std::string& core, cpu_vector_isa isa) {
    const std::string pick = suited_blas_core(core, isa);
    if (pick.empty())
        return "";
    return fmt::format(
        "ringscale: warning: OpenBLAS runs its '{}' kernels on this CPU, which has {}: its "
        "GEMMs (the training step's layers) run at a fraction of the core's "
        "speed (set OPENBLAS_CORETYPE={} for the launch, or use an OpenBLAS "
        "that knows this CPU)",
        core, isa.avx512 ? "AVX-512" : "AVX2", pick);
}

std::string blas_core_warning() {
    return blas_core_warning(blas_core(), this_cpu_isa());
}

} // namespace ringscale::kernels
