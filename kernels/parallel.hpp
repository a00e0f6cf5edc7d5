// Splitting the rank's elementwise and row-wise kernels (GELU, RMSNorm, AdamW, cross-entropy,
// residual adds, layout copies) over its threads: a process-wide pool of workers that sleep
// between calls (no thread is created per call), sized by the launcher's thread budget
// (blas_threads(), kernels/threads.hpp). Each worker gets one contiguous range, so every
// element is computed by exactly the operations the serial loop would use.
#pragma once

#include <cstddef>

namespace ringscale::kernels {

/// Ranges parallel_for uses for n items with this grain: at most blas_threads(), each of at
/// least `grain` items; 1 means it runs serially in the caller.
int parallel_ranges(std::size_t n, std::size_t grain);

/// Run range(ctx, i) for i in [0, ranges) on the pool, range 0 in the caller; blocks until
/// all are done. Not reentrant. parallel_for is the typed front end.
void run_ranges(int ranges, void (*range)(const void* ctx, int i), const void* ctx);

/// Run fn(k, begin, end) for range k of [0, n) split into parallel_ranges(n, grain)
/// contiguous ranges [n·k/ranges, n·(k+1)/ranges), range 0 in the caller. Blocks until every
/// range is done; fn must not throw and must not call parallel_for. Allocates nothing.
template <class Fn>
void parallel_for_ranges(std::size_t n, std::size_t grain, const Fn& fn) {
    const int ranges = parallel_ranges(n, grain);
    if (ranges <= 1) {
        if (n > 0)
            fn(std::size_t{0}, std::size_t{0}, n);
        return;
    }
    struct job {
        const Fn* fn;
        std::size_t n, ranges;
    } j{&fn, n, static_cast<std::size_t>(ranges)};
    run_ranges(
        ranges,
        [](const void* ctx, int i) {
            const job& jb = *static_cast<const job*>(ctx);
            const auto k = static_cast<std::size_t>(i);
            (*jb.fn)(k, jb.n * k / jb.ranges, jb.n * (k + 1) / jb.ranges);
        },
        &j);
}

/// parallel_for_ranges without the range index: fn(begin, end).
template <class Fn>
void parallel_for(std::size_t n, std::size_t grain, const Fn& fn) {
    parallel_for_ranges(n, grain,
                        [&](std::size_t, std::size_t begin, std::size_t end) { fn(begin, end); });
}

} // namespace ringscale::kernels
