// Which kernels the BLAS library (OpenBLAS) chose for this CPU. A DYNAMIC_ARCH OpenBLAS that
// does not know a CPU model falls back to a generic core: Debian's 0.3.21 runs its SSE3
// "Prescott" sgemm (about 12 GFLOP/s a core) on an AVX-512 Xeon of family 6 model 207, a tenth
// of what the core can do, and every GEMM of the training step and the reference with it.
#pragma once
#include <string>

namespace ringscale::kernels {

/// The vector instruction sets of this CPU that OpenBLAS's cores are named after: avx2 with
/// FMA (Haswell), avx512 with F, BW, DQ and VL (SkylakeX).
struct cpu_vector_isa {
    bool avx2 = false, avx512 = false;
};

/// This CPU's (cpuid, as the compiler's run-time checks read it).
cpu_vector_isa this_cpu_isa();

/// OpenBLAS's core name for this process ("Haswell", "SkylakeX", "Prescott"...).
std::string blas_core();

/// The CPU linear layers' GEMM in this process: "own" (the AVX-512 tiles, AMD CPUs) or
/// "openblas" (kernels/cpu/linear_gemm.hpp).
std::string linear_gemm();

/// The OPENBLAS_CORETYPE that suits `isa` when `core` is one of OpenBLAS's pre-AVX cores
/// (its fallback for a CPU it does not know) on a CPU with AVX2 or AVX-512: "SkylakeX" for
/// AVX-512, "Haswell" for AVX2 with FMA; "" when the core suits the CPU or nothing better fits.
std::string suited_blas_core(const std::string& core, cpu_vector_isa isa);

/// One line when suited_blas_core names a better core, naming the OPENBLAS_CORETYPE that
/// selects its kernels; "" otherwise.
std::string blas_core_warning(const std::string& core, cpu_vector_isa isa);

/// blas_core_warning for this process's OpenBLAS and CPU.
std::string blas_core_warning();

} // namespace ringscale::kernels
