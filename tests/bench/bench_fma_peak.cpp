// The machine's fp32 FMA peak (not a test): one core alone and every core this
// process may use together, in GFLOP/s per CPU second (the core's rate while it runs, robust to
// other processes) and, for the all-core round, per wall second (where load shows).
//
// usage: bench_fma_peak [cores] [rounds]
#include "tests/bench/fma_peak.hpp"

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    const int cores = argc > 1 ? std::atoi(argv[1]) : 0;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
    if (cores < 0 || rounds < 1 || rounds > 1000) {
        std::fprintf(stderr, "bench_fma_peak: cores must be >= 0 and rounds 1 to 1000\n");
        return 2;
    }
    const auto p = ringscale::bench::measure_fma_peak(cores, rounds);
    std::printf("FMA peak (fp32, %s, %.0f FLOP per loop iteration, best of %d rounds): "
                "%.1f GFLOP/s on one core, %.1f on %d core(s) together (%.1f over wall time)\n",
                p.isa.c_str(), ringscale::bench::fma_flops_per_iteration(), rounds, p.per_core,
                p.all_cores, p.cores, p.all_cores_wall);
    return 0;
}
