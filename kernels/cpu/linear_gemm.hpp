// The linear layers' GEMM (kernels/cpu/linear.cpp): the AVX-512 micro-kernel of the attention
// tiles (kernels/cpu/tile_micro.hpp: 6 rows x 64 columns of C in 24 zmm accumulators) in a loop
// nest for the training step's shapes. k in blocks of up to 2048; B copied one block x 64
// panel at a time (up to 512 KiB, so it stays in L2; transposed in 16 x 16 register blocks where
// B is Wᵀ) just before every 6-row block of A streams past it; A read in place, by rows or by
// columns, no copy; a bias row added as C is stored. C row-major, or as attention heads (BHSD,
// gemm_heads): the training step's Q/K/V projection and dO come out of the stores in the
// layout attention reads, with no copy after (a 6-row block never crosses a sequence).
//
// It runs where it beat OpenBLAS 0.3.21: on AMD's AVX-512 cores. On Zen 4 (2 cores, one rank
// each, alternate launches) the training step's GEMMs ran at 98-102 GFLOP/s a core against
// OpenBLAS's 91-97 (its Cooperlake kernels): 0.84-0.87 of the FMA peak against 0.78-0.83
// (tests/bench/README.md). On Intel's AVX-512 cores OpenBLAS's SkylakeX kernels were 1.2-1.4x
// faster than this micro-kernel, so there, and on CPUs without AVX-512, the layers call
// cblas_sgemm. Sums run over k in order within a block: deterministic, independent of threads.
#pragma once

#include <cstdint>

namespace ringscale::kernels::cpu {

/// A matrix operand in place: element (r, c) at p[r * rs + c * cs]; rs or cs is 1.
struct gemm_view {
    const float* p;
    std::int64_t rs, cs;
};

enum class gemm_impl { openblas, own };

/// Where C's elements go: plain (seq 0: row i at c + i·ldc), or as attention heads (BHSD):
/// rows are tokens row0, row0 + 1, ... of sequences of `seq` tokens, columns heads of `d`
/// columns, and element (i, j), with token r = row0 + i, is at
/// c + ((r / seq · (n / d) + j / d) · seq + r % seq) · d + j % d (ldc unused). The own GEMM only
/// (gemm_heads_fused()); 64 must divide d and d n.
struct gemm_heads {
    std::int64_t seq = 0, d = 0, row0 = 0;
};

/// What the linear layers use, chosen once: own on an AMD CPU with AVX-512F, else openblas.
/// RINGSCALE_LINEAR_GEMM=openblas or =own in the environment overrides it (A/B benchmarks;
/// own only where the CPU has AVX-512F); any other non-empty value throws config_error.
gemm_impl linear_gemm_impl();

/// "own" or "openblas".
const char* gemm_impl_name(gemm_impl impl);

/// C[m, n] = A·B (accumulate: C += A·B) with A m x k and B k x n, C row-major (stride ldc),
/// plus bias[n] on every row where bias is not null; by `impl` (own only where
/// tile_gemm_avx512(); elsewhere it runs OpenBLAS). Single-threaded.
void linear_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gemm_view a, gemm_view b, float* c,
                 std::int64_t ldc, bool accumulate, const float* bias = nullptr,
                 gemm_impl impl = linear_gemm_impl(), gemm_heads heads = {});

/// Whether linear_gemm writes C as heads with `impl` here, for heads of d columns (the own
/// GEMM, on a CPU with AVX-512F; 64 divides d).
bool gemm_heads_fused(std::int64_t d, gemm_impl impl = linear_gemm_impl());

} // namespace ringscale::kernels::cpu
