// The rows of one side of an attention call (queries or keys) and their global token
// positions: an array sorted ascending, or, with no array, the contiguous run first,
// first + 1, ... (the CUDA kernels' fast path: positions computed in registers). Host and
// device (RINGSCALE_HD, kernels/mask.hpp), free of CUDA types: the CUDA kernels read their
// positions through these (kernels/cuda/attention_device.cuh's position_at, count_at_most), so
// the position arithmetic they run is unit-tested on the CPU (tests/kernels/test_mask_tiles.cpp).
#pragma once

#include "kernels/mask.hpp"

#include <cstdint>

namespace ringscale::kernels {

/// pos[i] (pos not null); on the device through the read-only data cache.
RINGSCALE_HD std::int64_t load_position(const std::int64_t* pos, std::int64_t i) {
#ifdef __CUDA_ARCH__
    return __ldg(pos + i);
#else
    return pos[i];
#endif
}

/// Position of row `i`: pos[i], or first + i when pos is nullptr.
RINGSCALE_HD std::int64_t row_position(const std::int64_t* pos, std::int64_t first,
                                       std::int64_t i) {
    return pos ? load_position(pos, i) : first + i;
}

/// Number of rows i < n with row_position(pos, first, i) <= limit (positions sorted).
RINGSCALE_HD std::int64_t rows_at_most(const std::int64_t* pos, std::int64_t first, std::int64_t n,
                                       std::int64_t limit) {
    if (!pos) {
        const std::int64_t c = limit - first + 1;
        return c < 0 ? 0 : (c > n ? n : c);
    }
    std::int64_t lo = 0, hi = n; // upper_bound
    while (lo < hi) {
        const std::int64_t mid = (lo + hi) / 2;
        if (load_position(pos, mid) <= limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

} // namespace ringscale::kernels
