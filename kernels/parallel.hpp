// Splitting the rank's kernels (GEMM blocks, GELU, RMSNorm, AdamW, cross-entropy, residual
// adds, layout copies) over its threads: a process-wide pool of workers that sleep between
// calls (no thread is created per call), sized by the launcher's thread budget
// (blas_threads(), kernels/threads.hpp). Work is cut into fixed chunks that the caller and
// the workers claim one at a time, so a worker the OS schedules late (a shared machine) costs
// at most one chunk, and which chunk holds which items never depends on the thread count:
// per-chunk partial sums give the same result with any number of threads.
#pragma once

#include <cstddef>

namespace ringscale::kernels {

/// Most chunks one call is cut into (bounds per-chunk scratch such as partial sums).
inline constexpr std::size_t max_chunks = 256;

/// Items per chunk for n items: at least `grain`, and large enough for at most max_chunks.
std::size_t chunk_size(std::size_t n, std::size_t grain);

/// Chunks n items make with this grain (0 for n = 0).
std::size_t chunk_count(std::size_t n, std::size_t grain);

/// Run chunk(ctx, c) for every c in [0, chunks) on up to `threads` threads (0: the budget,
/// blas_threads()), the caller included; blocks until all are done. Not reentrant.
/// parallel_for_chunks is the typed front end.
void run_chunks(std::size_t chunks, int threads, void (*chunk)(const void* ctx, std::size_t c),
                const void* ctx);

/// Run fn(c, begin, end) for chunk c = [begin, end) of [0, n), chunks of chunk_size(n, grain)
/// items, on the rank's threads (`threads`: 0 = the budget). Blocks until every chunk is done;
/// fn must not throw and must not call parallel_for. Allocates nothing.
template <class Fn>
void parallel_for_chunks(std::size_t n, std::size_t grain, const Fn& fn, int threads = 0) {
    struct job {
        const Fn* fn;
        std::size_t n, size;
    } j{&fn, n, chunk_size(n, grain)};
    run_chunks(
        chunk_count(n, grain), threads,
        [](const void* ctx, std::size_t c) {
            const job& jb = *static_cast<const job*>(ctx);
            const std::size_t begin = c * jb.size;
            (*jb.fn)(c, begin, begin + jb.size < jb.n ? begin + jb.size : jb.n);
        },
        &j);
}

/// parallel_for_chunks without the chunk index: fn(begin, end).
template <class Fn>
void parallel_for(std::size_t n, std::size_t grain, const Fn& fn, int threads = 0) {
    parallel_for_chunks(
        n, grain, [&](std::size_t, std::size_t begin, std::size_t end) { fn(begin, end); },
        threads);
}

} // namespace ringscale::kernels
