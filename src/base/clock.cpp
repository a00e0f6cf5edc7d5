#include "clock.hpp"

#include <algorithm>
#include <limits>

namespace ringscale {

timer_info measure_timer() {
    timer_info info;
    // Resolution: the smallest nonzero difference between consecutive reads.
    double best = std::numeric_limits<double>::infinity();
    for (int trial = 0; trial < 1000; ++trial) {
        const double a = now_s();
        double b = now_s();
        while (b == a)
            b = now_s();
        best = std::min(best, b - a);
    }
    info.resolution_s = best;
    // Overhead: the mean cost of one read, over many reads.
    constexpr int reads = 100000;
    const double start = now_s();
    double sink = 0;
    for (int i = 0; i < reads; ++i)
        sink += now_s();
    const double end = now_s();
    info.overhead_s = (end - start) / reads + (sink < 0 ? 1 : 0); // keep `sink` alive
    return info;
}

} // namespace ringscale
