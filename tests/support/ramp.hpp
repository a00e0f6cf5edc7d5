// For the GEMM tests: seeded operands, multiples of 1/16 in [-14/16, 14/16] (exact in fp32).
#pragma once

#include <cstdint>
#include <vector>

namespace ringscale::testing_support {

/// n values, a pattern of period 29 shifted by seed.
inline std::vector<float> ramp(std::int64_t n, int seed) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] =
            static_cast<float>(((i * 37 + seed * 11) % 29) - 14) / 16.0f;
    return v;
}

} // namespace ringscale::testing_support
