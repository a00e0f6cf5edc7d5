// The tile products of the CPU attention kernels (kernels/cpu/attention_cpu.cpp): register-
// blocked AVX-512 micro-kernels (6 rows x 64 columns of C in 24 zmm accumulators, one
// broadcast of A and four loads of B per step), chosen at run time where the CPU has AVX-512F;
// elsewhere OpenBLAS sgemm. They do not depend on the core type OpenBLAS detects (OpenBLAS
// 0.3.21 runs its SSE3 "Prescott" kernels on CPUs newer than it knows).
//
// Row-major throughout. The score products (Q·Kᵀ, dO·Vᵀ) read the key side transposed and
// packed in panels of 64 columns (pack_transposed), and can leave each row's maximum by lane
// for the softmax; the others copy each 128 x 64 panel of B contiguous before use.
// Sums run over k in blocks of 128, in order within a block: deterministic, independent of
// threads.
#pragma once

#include <cstdint>

namespace ringscale::kernels::cpu {

/// True when the AVX-512 micro-kernels run on this CPU (checked once).
bool tile_gemm_avx512();

/// Floats of n rows of k packed by pack_transposed: n rounded up to 64, times k.
inline std::int64_t packed_size(std::int64_t n, std::int64_t k) {
    return (n + 63) / 64 * 64 * k;
}

/// srcᵀ in panels: dst[(j / 64) * 64 k + kk * 64 + j % 64] = src[j * ld + kk] for j < n,
/// kk < k (ld 0: ld = k); the last panel's columns past n are zero.
void pack_transposed(const float* src, std::int64_t n, std::int64_t k, float* dst,
                     std::int64_t ld = 0);

/// C[m, n] = alpha * A[m, k] · B[n, k]ᵀ (C's stride ldc, A's k). With the AVX-512 kernels B is
/// read from `bt`, B packed by pack_transposed; otherwise from `b`. With `lane_max` [m, 16]
/// (filled with -inf by the caller) the AVX-512 kernels also leave there the maximum of C's
/// row i over its columns j = l mod 16 at lane_max[16 i + l], and return true; false: not.
/// `pf` (pf_floats of them): memory the caller reads next, fetched toward L2 a slice before each
/// micro-kernel call (AVX-512 kernels only; a hint, C does not depend on it).
bool tile_gemm_nt(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                  const float* b, const float* bt, float* c, std::int64_t ldc,
                  float* lane_max = nullptr, const float* pf = nullptr, std::int64_t pf_floats = 0);

/// B[k, n] (stride ld) in the panels the AVX-512 kernels read: dst[(j / 64) * 64 k + kk * 64 +
/// j % 64] = src[kk * ld + j]; the last panel's columns past n are zero. packed_size(n, k) floats.
void pack_panels(const float* src, std::int64_t k, std::int64_t n, std::int64_t ld, float* dst);

/// C[m, n] += A[m, k] · B[k, n] (strides lda, ldb, ldc). With the AVX-512 kernels B is read from
/// `b_panels` where given (the first k of b_rows >= k rows packed by pack_panels), else copied
/// panel by panel. `pf`, pf_floats: as tile_gemm_nt's.
void tile_gemm_nn_acc(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                      std::int64_t ldc, const float* b_panels = nullptr, std::int64_t b_rows = 0,
                      const float* pf = nullptr, std::int64_t pf_floats = 0);

/// C[m, n] += A[k, m]ᵀ · B[k, n] (strides lda, ldb, ldc).
void tile_gemm_tn_acc(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                      std::int64_t ldc);

} // namespace ringscale::kernels::cpu
