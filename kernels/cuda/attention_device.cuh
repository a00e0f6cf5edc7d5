// Device-only building blocks shared by the CUDA attention kernels (attention_fwd.cu,
// attention_bwd.cu): element traits for bf16/fp16, the m16n8k16 Tensor Core MMA, ldmatrix,
// cp.async, and the XOR-swizzled shared-memory tile layout. Names CUDA types: include it from
// .cu files only, never from host code.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16" with .bf16/.f16 inputs and
// .f32 accumulators); g = lane / 4, t = lane % 4; each 32-bit register holds two 16-bit
// elements, the lower column (or k) index in the low half:
//   A 16x16 row-major, 4 regs: a0 (row g, k 2t..2t+1), a1 (row g+8, k 2t..), a2 (row g,
//     k 2t+8..), a3 (row g+8, k 2t+8..).
//   B 16x8 "col", 2 regs: b0 (k 2t..2t+1, col g), b1 (k 2t+8..2t+9, col g).
//   C/D 16x8 fp32, 4 regs: c0, c1 (row g, cols 2t, 2t+1), c2, c3 (row g+8, same cols).
// So an accumulator tile of 16 rows x 16 columns (two C fragments) packs into one A fragment:
// the trick that keeps P (and dS) in registers between the two GEMMs of flash attention.
#pragma once

#include "kernels/attention_rows.hpp"
#include "kernels/attention_shape.hpp"

#include "src/base/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <initializer_list>
#include <string>

namespace ringscale::kernels::cuda::attn {

constexpr float log2e = 1.44269504088896341f;
constexpr float ln2 = 0.693147180559945309f;

/// Host-side checks shared by the attention wrappers: a valid shape, head_dim 64 or 128, a
/// grid that fits (batch * heads <= 65535), 16-byte aligned input tensors (`by16`: cp.async
/// copies 16 bytes) and 8-byte aligned fp32 outputs (`by8`: float2 accesses). Throws
/// config_error naming `who`.
inline void check_attention_launch(const char* who, const attention_shape& s,
                                   std::initializer_list<const void*> by16,
                                   std::initializer_list<const void*> by8) {
    check_attention_shape(s);
    RINGSCALE_REQUIRE(s.head_dim == 64 || s.head_dim == 128,
                      std::string(who) + ": head_dim must be 64 or 128, got " +
                          std::to_string(s.head_dim));
    RINGSCALE_REQUIRE(s.batch * s.heads <= 65535,
                      std::string(who) + ": batch * heads must be <= 65535");
    for (const void* ptr : by16)
        RINGSCALE_REQUIRE(reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0,
                          std::string(who) + ": Q, K, V (and dO) must be 16-byte aligned");
    for (const void* ptr : by8)
        RINGSCALE_REQUIRE(reinterpret_cast<std::uintptr_t>(ptr) % 8 == 0,
                          std::string(who) + ": O, dQ, dK, dV must be 8-byte aligned");
}

/// Sorted global token position of row `i`: ptr[i], or first + i when ptr is nullptr
/// (kernels/attention_rows.hpp, host and device, unit-tested on the CPU).
__device__ __forceinline__ std::int64_t position_at(const std::int64_t* ptr, std::int64_t first,
                                                    std::int64_t i) {
    return row_position(ptr, first, i);
}

/// Number of rows i < n with position_at(ptr, first, i) <= limit (positions sorted).
__device__ __forceinline__ std::int64_t count_at_most(const std::int64_t* ptr, std::int64_t first,
                                                      std::int64_t n, std::int64_t limit) {
    return rows_at_most(ptr, first, n, limit);
}

/// Pack two floats into one 32-bit register of two 16-bit elements (lo in the low half).
template <typename T>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi);

template <>
__device__ __forceinline__ std::uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
}

template <>
__device__ __forceinline__ std::uint32_t pack2<__half>(float lo, float hi) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
}

/// d += a * b on Tensor Cores: one m16n8k16 MMA, fp32 accumulators, T = bf16 or fp16.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4],
                                          std::uint32_t b0, std::uint32_t b1);

template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], const std::uint32_t (&a)[4],
                                                         std::uint32_t b0, std::uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], const std::uint32_t (&a)[4],
                                                  std::uint32_t b0, std::uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Four 8x8 b16 matrices from shared memory; lanes 8m..8m+7 give the row addresses of matrix
/// m, and r[m] receives (row lane/4, cols 2(lane%4), +1) of matrix m.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_ptr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(row_ptr)));
}

/// As ldmatrix_x4, transposed: r[m] receives (rows 2(lane%4), +1; col lane/4) of matrix m.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row_ptr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(row_ptr)));
}

/// Asynchronous 16-byte global -> shared copy; zero-fills the destination when !valid (the
/// source is then not read, but must still be a valid address).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Wait until at most `pending` committed groups of this thread are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

/// Element offset of (row, 16-byte chunk) in a [rows][cols] tile of 16-bit elements whose
/// chunks are XOR-swizzled by row % 8: the 8 rows an ldmatrix phase reads (same logical
/// chunk) land in 8 different bank groups, and cp.async writes whole chunks, so both sides
/// are conflict-free. cols must be a multiple of 64 (8 chunks).
template <int cols>
__device__ __forceinline__ int swizzle(int row, int chunk) {
    static_assert(cols % 64 == 0, "swizzled tiles need a multiple of 64 columns");
    return row * cols + ((chunk ^ (row & 7)) << 3);
}

/// cp.async a [rows][cols] tile from row-major global memory (row stride `cols` elements)
/// starting at global row `row0`; rows at or beyond `valid_rows` are zero-filled. All
/// `threads` threads of the block call it.
template <int rows, int cols, int threads, typename T>
__device__ __forceinline__ void load_tile_async(T* smem, const T* gmem, std::int64_t row0,
                                                std::int64_t valid_rows) {
    constexpr int chunks = cols / 8;
    static_assert((rows * chunks) % threads == 0, "tile chunks must divide among the threads");
#pragma unroll
    for (int it = 0; it < rows * chunks / threads; ++it) {
        const int idx = it * threads + static_cast<int>(threadIdx.x);
        const int r = idx / chunks, c = idx % chunks;
        const bool valid = row0 + r < valid_rows;
        const T* src = valid ? gmem + (row0 + r) * cols + c * 8 : gmem;
        cp_async_16(smem + swizzle<cols>(r, c), src, valid);
    }
}

/// A fragment of the 16x16 block at (row0, chunk0 * 8) of a swizzled row-major tile.
template <int cols, typename T>
__device__ __forceinline__ void load_a(std::uint32_t (&a)[4], const T* tile, int row0, int chunk0,
                                       int lane) {
    ldmatrix_x4(a, tile + swizzle<cols>(row0 + (lane & 15), chunk0 + (lane >> 4)));
}

/// A fragment of the 16x16 block at (row0, chunk0 * 8) of the TRANSPOSE of a swizzled tile:
/// A[i][k] = tile[row0 + k][chunk0 * 8 + i].
template <int cols, typename T>
__device__ __forceinline__ void load_a_trans(std::uint32_t (&a)[4], const T* tile, int row0,
                                             int chunk0, int lane) {
    ldmatrix_x4_trans(a, tile + swizzle<cols>(row0 + ((lane >> 4) << 3) + (lane & 7),
                                              chunk0 + ((lane >> 3) & 1)));
}

/// B fragments of two adjacent n-blocks when B[k][n] = tile[n][k] (rows of the tile are the
/// n index: K in S = Q K^T): rows n0..n0+15, k chunk chunk0 and chunk0+1. b[0], b[1] serve
/// n-block n0; b[2], b[3] serve n-block n0+8.
template <int cols, typename T>
__device__ __forceinline__ void load_b_rows(std::uint32_t (&b)[4], const T* tile, int n0,
                                            int chunk0, int lane) {
    ldmatrix_x4(
        b, tile + swizzle<cols>(n0 + ((lane >> 4) << 3) + (lane & 7), chunk0 + ((lane >> 3) & 1)));
}

/// B fragments of two adjacent n-blocks when B[k][n] = tile[k][n] (rows of the tile are the
/// k index: V in O = P V): k rows k0..k0+15, n chunks chunk0 (b[0], b[1]) and chunk0+1
/// (b[2], b[3]).
template <int cols, typename T>
__device__ __forceinline__ void load_b_trans(std::uint32_t (&b)[4], const T* tile, int k0,
                                             int chunk0, int lane) {
    ldmatrix_x4_trans(
        b, tile + swizzle<cols>(k0 + (((lane >> 3) & 1) << 3) + (lane & 7), chunk0 + (lane >> 4)));
}

/// Pack the accumulators of n-blocks 2kk and 2kk+1 (16 rows x 16 columns, fp32) into the A
/// fragment of k-step kk.
template <typename T>
__device__ __forceinline__ void pack_a(std::uint32_t (&a)[4], const float (&lo)[4],
                                       const float (&hi)[4]) {
    a[0] = pack2<T>(lo[0], lo[1]);
    a[1] = pack2<T>(lo[2], lo[3]);
    a[2] = pack2<T>(hi[0], hi[1]);
    a[3] = pack2<T>(hi[2], hi[3]);
}

/// Normalise one warp's 16-row forward result over a K/V block and merge it into the running
/// (O, LSE) in global memory, as kernels::cpu::attention_fwd_cpu does; shared by the sm80 and sm90
/// forwards. `o` [q_len, D] and `lse` [q_len] are this (batch, head)'s slices, `w0` the warp's
/// first row; the thread holds rows w0 + lane/4 and w0 + lane/4 + 8 (r = 0, 1) with their
/// running max (log2 units) and its partial row sums (reduced over the quad here), and
/// acc(n, i) gives element i (0..3) of its C fragment of column block n. Rows that saw no key
/// of this block are left untouched.
template <int D, typename Acc>
__device__ __forceinline__ void merge_rows_out(float* o, float* lse, std::int64_t q_len,
                                               const float (&row_max)[2], float (&row_sum)[2],
                                               std::int64_t w0, int lane, Acc acc) {
    float old_lse[2];
    bool live[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 1);
        row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 2);
        const std::int64_t row = w0 + lane / 4 + 8 * r;
        live[r] = row < q_len && row_sum[r] > 0.0f;
        old_lse[r] = live[r] ? lse[row] : -INFINITY;
    }
    __syncwarp(); // the quad has read each row's old LSE before lane 4g writes it
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (!live[r])
            continue;
        const std::int64_t row = w0 + lane / 4 + 8 * r;
        const float blk = (row_max[r] + log2f(row_sum[r])) * ln2;
        const float hi = fmaxf(old_lse[r], blk), lo = fminf(old_lse[r], blk);
        const float merged = hi + log1pf(expf(lo - hi)); // hi is finite: blk is
        const bool seen = old_lse[r] != -INFINITY;       // as on the CPU, O of an unseen row is 0
        const float w_old = seen ? expf(old_lse[r] - merged) : 0.0f;
        const float w_blk = expf(blk - merged) / row_sum[r];
        float* out = o + row * D + 2 * (lane % 4);
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            float2 prev = seen ? *reinterpret_cast<const float2*>(out + n * 8) : float2{0.0f, 0.0f};
            prev.x = w_old * prev.x + w_blk * acc(n, 2 * r);
            prev.y = w_old * prev.y + w_blk * acc(n, 2 * r + 1);
            *reinterpret_cast<float2*>(out + n * 8) = prev;
        }
        if (lane % 4 == 0)
            lse[row] = merged;
    }
}

} // namespace ringscale::kernels::cuda::attn
