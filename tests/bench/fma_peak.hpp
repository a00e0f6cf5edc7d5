// The machine's fp32 FMA peak, measured: independent FMA chains per thread in the
// widest vector ISA the CPU has (AVX-512, else AVX2 with FMA, else SSE multiply-add), one thread
// per core the process may use, each pinned to its core. The kernels' rates are quoted as a
// fraction of this all-core figure (tests/bench/attention_kernel.sh, train_step.sh).
//
// On a shared machine a thread's wall time includes the time other processes held its core; a
// thread's own CPU time does not, so the rate per CPU second is the core's rate while it runs,
// and the best round of several is the peak (a loop that touches only registers cannot run
// faster than the hardware; load only makes a round slower).
#pragma once

#include <string>

namespace ringscale::bench {

/// One measurement of the FMA peak.
struct fma_peak {
    std::string isa;           ///< "avx512", "avx2+fma" or "sse (no FMA)"
    int cores = 0;             ///< threads run together (one per core) for the all-core figure
    double per_core = 0;       ///< GFLOP/s of one thread alone, best round (per CPU second)
    double all_cores = 0;      ///< GFLOP/s of `cores` threads together, best round, summed
    double all_cores_wall = 0; ///< the same round's GFLOP/s over wall time (load shows here)
};

/// Measures the peak: `rounds` rounds of about `seconds` each, first one thread, then `cores`
/// threads together (cores <= 0, or more than the process may use: every core it may use).
fma_peak measure_fma_peak(int cores, int rounds = 5, double seconds = 0.2);

/// FLOPs of one thread's FMA loop per iteration in the ISA chosen (a fused multiply-add is 2).
double fma_flops_per_iteration();

} // namespace ringscale::bench
