#include "kernels/cpu/linear.hpp"

#include "kernels/cpu/linear_gemm.hpp"
#include "kernels/cpu/vec_math.hpp"
#include "kernels/parallel.hpp"
#include "kernels/threads.hpp"

#include <algorithm>
#include <array>

namespace ringscale::kernels::cpu {

namespace {

// db[o] += Σ_t dy[t, o] for columns [begin, end): over thousands of tokens, accumulated in
// double (a block of columns at a time, on the stack; 8 lanes wide on AVX-512) and added once.
RINGSCALE_VEC_CLONES void bias_grad_cols(const linear_shape& s, const float* dy, std::size_t begin,
                                         std::size_t end, float* db) {
    constexpr std::size_t block = 64;
    for (std::size_t o0 = begin; o0 < end; o0 += block) {
        const std::size_t width = std::min(block, end - o0);
        std::array<double, block> sum{};
        for (std::size_t t = 0; t < s.tokens; ++t) {
            const float* row = dy + t * s.out + o0;
            for (std::size_t o = 0; o < width; ++o)
                sum[o] += row[o];
        }
        for (std::size_t o = 0; o < width; ++o)
            db[o0 + o] += static_cast<float>(sum[o]);
    }
}

// Rows per chunk: token rows for y and dx, output rows for dW; one chunk per thread. Each
// chunk's GEMM packs the shared operand again, and OpenBLAS's packing and edges cost more on
// small calls: at 1024 tokens (hidden 512 and 2048, SkylakeX kernels) whole calls ran at
// 145-152 GFLOP/s a core, chunks of 256 token rows at 137-143 and dW in chunks of 128 output
// rows at 123-125 (tests/bench/README.md). At least 32 rows.
std::size_t rows_grain(std::size_t rows, int threads) {
    const auto t = static_cast<std::size_t>(std::max(1, threads));
    return std::max<std::size_t>(32, (rows + t - 1) / t);
}

} // namespace

void linear_fwd(const linear_shape& s, const float* x, const float* w, const float* b, float* y) {
    linear_check(s);
    const auto n = static_cast<std::int64_t>(s.out), k = static_cast<std::int64_t>(s.in);
    const serial_blas budget;
    // Token rows split over the rank's threads, each a single-threaded GEMM on its rows.
    parallel_for(
        s.tokens, rows_grain(s.tokens, budget.threads()),
        [&](std::size_t t0, std::size_t t1) {
            linear_gemm(static_cast<std::int64_t>(t1 - t0), n, k, {x + t0 * s.in, k, 1}, {w, 1, k},
                        y + t0 * s.out, n, false, b);
        },
        budget.threads());
}

void linear_bwd(const linear_shape& s, const float* x, const float* w, const float* dy, float* dx,
                float* dw, float* db) {
    linear_check(s);
    const auto tokens = static_cast<std::int64_t>(s.tokens);
    const auto in = static_cast<std::int64_t>(s.in), out = static_cast<std::int64_t>(s.out);
    const serial_blas budget;
    if (dx) // dx[tokens, in] = dy[tokens, out]·W[out, in], by token rows
        parallel_for(
            s.tokens, rows_grain(s.tokens, budget.threads()),
            [&](std::size_t t0, std::size_t t1) {
                linear_gemm(static_cast<std::int64_t>(t1 - t0), in, out, {dy + t0 * s.out, out, 1},
                            {w, in, 1}, dx + t0 * s.in, in, false);
            },
            budget.threads());
    // dw[out, in] += dy[tokens, out]ᵀ·x[tokens, in] and db[out] += Σ dy, by output rows.
    parallel_for(
        s.out, rows_grain(s.out, budget.threads()),
        [&](std::size_t o0, std::size_t o1) {
            linear_gemm(static_cast<std::int64_t>(o1 - o0), in, tokens, {dy + o0, 1, out},
                        {x, in, 1}, dw + o0 * s.in, in, true);
            if (db)
                bias_grad_cols(s, dy, o0, o1, db);
        },
        budget.threads());
}

} // namespace ringscale::kernels::cpu
