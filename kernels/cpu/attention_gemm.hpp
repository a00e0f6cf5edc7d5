// The tile products of the CPU attention kernels (kernels/cpu/attention_cpu.cpp): register-
// blocked AVX-512 micro-kernels (6 rows x 64 columns of C in 24 zmm accumulators, one
// broadcast of A and four loads of B per step), chosen at run time where the CPU has AVX-512F;
// elsewhere OpenBLAS sgemm. They do not depend on the core type OpenBLAS detects (OpenBLAS
// 0.3.21 runs its SSE3 "Prescott" kernels on CPUs newer than it knows).
//
// Row-major throughout. The score products (Q·Kᵀ, dO·Vᵀ) read the key side transposed and
// packed, [k][ld] with ld >= n rounded up to 16 (pack_transposed); the others read B as is.
// Sums run over k in blocks of 128, in order within a block: deterministic, independent of
// threads.
#pragma once

#include <cstdint>

namespace ringscale::kernels::cpu {

/// True when the AVX-512 micro-kernels run on this CPU (checked once).
bool tile_gemm_avx512();

/// Columns of a packed transposed panel of n rows: n rounded up to 16.
inline std::int64_t packed_ld(std::int64_t n) {
    return (n + 15) / 16 * 16;
}

/// dst[kk * ld + j] = src[j * k + kk] for j < n, kk < k; columns [n, ld) are zeroed.
void pack_transposed(const float* src, std::int64_t n, std::int64_t k, float* dst, std::int64_t ld);

/// C[m, n] = alpha * A[m, k] · B[n, k]ᵀ (C's stride ldc, A's k). With the AVX-512 kernels B is
/// read from `bt`, B packed by pack_transposed with stride ldbt; otherwise from `b`.
void tile_gemm_nt(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                  const float* b, const float* bt, std::int64_t ldbt, float* c, std::int64_t ldc);

/// C[m, n] += A[m, k] · B[k, n] (strides lda, ldb, ldc).
void tile_gemm_nn_acc(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                      std::int64_t ldc);

/// C[m, n] += A[k, m]ᵀ · B[k, n] (strides lda, ldb, ldc).
void tile_gemm_tn_acc(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                      std::int64_t ldc);

} // namespace ringscale::kernels::cpu
