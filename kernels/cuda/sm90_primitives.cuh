// Device-only Hopper (sm_90a) building blocks for the attention kernels: the wgmma
// shared-memory matrix descriptor (128-byte swizzle), warpgroup MMAs m64nNk16 with bf16/fp16
// inputs and fp32 accumulators (both operands in shared memory, "SS", or A in registers,
// "RS"), the wgmma fence/commit/wait, mbarriers, TMA tile loads completing on an mbarrier,
// the async-proxy fence, setmaxnreg and named barriers. Inline PTX, no CUTLASS. Names CUDA
// types: include it from .cu files only. Compile-checked for sm_90a; NOT YET RUN ON A GPU.
//
// Everything here exists only on the arch-specific target (compute_90a): elsewhere (sm_80,
// plain sm_90) each function compiles to __trap(), and kernels using them must not be
// launched there (attention_path.hpp decides). Test RINGSCALE_SM90A_DEVICE in device code.
//
// Layouts (PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory Layout"), for 2-byte
// elements and the 128-byte swizzle that TMA writes with CU_TENSOR_MAP_SWIZZLE_128B:
// - a swizzle atom is 8 rows of 128 bytes (64 elements), 1024 bytes, 1024-byte aligned; the
//   16-byte chunk c of row r is stored at chunk c ^ (r % 8). A tile wider than 64 elements is
//   stored as column blocks of 64, one after the other ([cols / 64][rows][64]).
// - K-major operand (A = Q or B = K in S = Q K^T: the reduction index is contiguous): rows
//   8 apart are SBO = 1024 bytes apart; LBO is unused. Step k (16 elements = 32 bytes) of a
//   64-wide column block starts 32 * k bytes into it; the next column block starts
//   rows * 128 bytes further.
// - MN-major operand (B = V in O = P V: the output index d is contiguous): within a column
//   block the 8 k-rows of an atom are 128 bytes apart, atoms along k SBO = 1024 bytes apart,
//   and the next 64-wide block of d LBO = rows * 128 bytes further; it needs trans_b = 1.
// Accumulator fragment of m64nN (fp32, N / 2 registers per thread): warp w of the warpgroup
// owns rows 16w..16w+15; with g = lane / 4, t = lane % 4, d[4j + 0..1] are (row 16w + g,
// cols 8j + 2t, +1) and d[4j + 2..3] the same columns of row 16w + g + 8: the mma.sync C
// layout repeated over N / 8 column blocks. The register A fragment of m64k16 is the
// mma.sync m16n8k16 A fragment of the warp's 16 rows (attention_device.cuh, pack_a).
#pragma once

#include <cstdint>
#include <cuda.h> // CUtensorMap (a type only: nothing here calls the driver)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define RINGSCALE_SM90A_DEVICE 1
#else
#define RINGSCALE_SM90A_DEVICE 0
#endif

namespace ringscale::kernels::cuda::sm90 {

/// Shared-memory address (the .shared window) of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- wgmma matrix descriptors -------------------------------------------------------------

/// Descriptor of a 128-byte-swizzled operand tile at `smem` (1024-byte aligned atom, or an
/// offset of k * 32 bytes into one): bits 0-13 start address >> 4, 16-29 LBO >> 4, 32-45
/// SBO >> 4, 62-63 swizzle mode (1 = 128 B). Byte offsets as in the header comment.
__device__ __forceinline__ std::uint64_t wgmma_desc(const void* smem, std::uint32_t lbo_bytes,
                                                    std::uint32_t sbo_bytes) {
    std::uint64_t desc = (smem_u32(smem) & 0x3FFFFu) >> 4;
    desc |= static_cast<std::uint64_t>((lbo_bytes >> 4) & 0x3FFFu) << 16;
    desc |= static_cast<std::uint64_t>((sbo_bytes >> 4) & 0x3FFFu) << 32;
    desc |= static_cast<std::uint64_t>(1) << 62;
    return desc;
}

/// Descriptor of a K-major 128B-swizzled tile (8-row groups 1024 bytes apart).
__device__ __forceinline__ std::uint64_t wgmma_desc_k_major(const void* smem) {
    return wgmma_desc(smem, 16, 1024);
}

/// Descriptor of an MN-major 128B-swizzled tile whose 64-element column blocks are
/// `block_bytes` apart (rows * 128 for a [cols / 64][rows][64] tile).
__device__ __forceinline__ std::uint64_t wgmma_desc_mn_major(const void* smem,
                                                             std::uint32_t block_bytes) {
    return wgmma_desc(smem, block_bytes, 1024);
}

// ---- wgmma ---------------------------------------------------------------------------------

/// Order this thread's prior register and shared-memory accesses before the warpgroup's next
/// wgmma.mma_async (needed whenever accumulators or A registers were written by other code).
__device__ __forceinline__ void wgmma_fence() {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

/// Close the batch of wgmma.mma_async issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit() {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/// Wait until at most `pending` committed wgmma groups of this warpgroup are in flight.
template <int pending>
__device__ __forceinline__ void wgmma_wait() {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
#endif
}

/// Keep the compiler from moving reads or writes of `d` across a wgmma fence or wait: the
/// asynchronous MMA owns the registers in between.
template <int n>
__device__ __forceinline__ void wgmma_fence_operand(float (&d)[n]) {
#pragma unroll
    for (int i = 0; i < n; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

template <int n>
__device__ __forceinline__ void wgmma_fence_operand(std::uint32_t (&r)[n]) {
#pragma unroll
    for (int i = 0; i < n; ++i)
        asm volatile("" : "+r"(r[i])::"memory");
}

// Operand lists of the wgmma wrappers (N / 2 accumulator registers per thread).
#define RINGSCALE_WG_REGS32                                                                        \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%" \
    "25,%26,%27,%28,%29,%30,%31}"
#define RINGSCALE_WG_REGS64                                                                        \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%" \
    "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%" \
    "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define RINGSCALE_WG_OUT8(d, i)                                                                    \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),    \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define RINGSCALE_WG_OUT32(d)                                                                      \
    RINGSCALE_WG_OUT8(d, 0), RINGSCALE_WG_OUT8(d, 8), RINGSCALE_WG_OUT8(d, 16),                    \
        RINGSCALE_WG_OUT8(d, 24)
#define RINGSCALE_WG_OUT64(d)                                                                      \
    RINGSCALE_WG_OUT32(d), RINGSCALE_WG_OUT8(d, 32), RINGSCALE_WG_OUT8(d, 40),                     \
        RINGSCALE_WG_OUT8(d, 48), RINGSCALE_WG_OUT8(d, 56)

// d (+)= A B with A, B in shared memory: scale_d 0 overwrites d, 1 accumulates. TY is the
// PTX input type; IA.. are the operand numbers of desc_a, desc_b, scale_d, trans_a, trans_b.
#define RINGSCALE_WGMMA_SS(TY, N, REGS, OUTS, IA, IB, IS, ITA, ITB)                                \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #IS ", 0;\n"                                 \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " REGS ", %" #IA    \
                 ", %" #IB ", p, 1, 1, %" #ITA ", %" #ITB ";\n}\n"                                 \
                 : OUTS                                                                            \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(trans_a), "n"(trans_b))

// d (+)= A B with A in registers (four 32-bit registers, the m16n8k16 A fragment of the
// warp's 16 rows) and B in shared memory.
#define RINGSCALE_WGMMA_RS(TY, N, REGS, OUTS, IA0, IA1, IA2, IA3, IB, IS, ITB)                     \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #IS ", 0;\n"                                 \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " REGS ", {%" #IA0  \
                 ", %" #IA1 ", %" #IA2 ", %" #IA3 "}, %" #IB ", p, 1, 1, %" #ITB ";\n}\n"          \
                 : OUTS                                                                            \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d),          \
                   "n"(trans_b))

template <typename T>
constexpr bool is_bf16 = std::is_same<T, __nv_bfloat16>::value;

/// Warpgroup MMA m64nNk16 (N = 64 or 128), both operands in shared memory (descriptors),
/// fp32 accumulators d[N / 2] (layout in the header comment); T = __nv_bfloat16 or __half.
/// scale_d = 0: d = A B; 1: d += A B. trans_a / trans_b = 1 read an MN-major operand.
/// Asynchronous: fence before, commit and wait after.
template <int N, typename T, int trans_a = 0, int trans_b = 0>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], std::uint64_t desc_a,
                                         std::uint64_t desc_b, int scale_d) {
    static_assert(N == 64 || N == 128, "wgmma_ss: N must be 64 or 128");
#if RINGSCALE_SM90A_DEVICE
    if constexpr (N == 64) {
        if constexpr (is_bf16<T>)
            RINGSCALE_WGMMA_SS("bf16", 64, RINGSCALE_WG_REGS32, RINGSCALE_WG_OUT32(d), 32, 33, 34,
                               35, 36);
        else
            RINGSCALE_WGMMA_SS("f16", 64, RINGSCALE_WG_REGS32, RINGSCALE_WG_OUT32(d), 32, 33, 34,
                               35, 36);
    } else {
        if constexpr (is_bf16<T>)
            RINGSCALE_WGMMA_SS("bf16", 128, RINGSCALE_WG_REGS64, RINGSCALE_WG_OUT64(d), 64, 65, 66,
                               67, 68);
        else
            RINGSCALE_WGMMA_SS("f16", 128, RINGSCALE_WG_REGS64, RINGSCALE_WG_OUT64(d), 64, 65, 66,
                               67, 68);
    }
#else
    __trap();
#endif
}

/// Warpgroup MMA m64nNk16 (N = 64 or 128) with A in registers (a: this thread's four packed
/// registers of its warp's 16 x 16 block) and B in shared memory; otherwise as wgmma_ss.
template <int N, typename T, int trans_b = 0>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const std::uint32_t (&a)[4],
                                         std::uint64_t desc_b, int scale_d) {
    static_assert(N == 64 || N == 128, "wgmma_rs: N must be 64 or 128");
#if RINGSCALE_SM90A_DEVICE
    if constexpr (N == 64) {
        if constexpr (is_bf16<T>)
            RINGSCALE_WGMMA_RS("bf16", 64, RINGSCALE_WG_REGS32, RINGSCALE_WG_OUT32(d), 32, 33, 34,
                               35, 36, 37, 38);
        else
            RINGSCALE_WGMMA_RS("f16", 64, RINGSCALE_WG_REGS32, RINGSCALE_WG_OUT32(d), 32, 33, 34,
                               35, 36, 37, 38);
    } else {
        if constexpr (is_bf16<T>)
            RINGSCALE_WGMMA_RS("bf16", 128, RINGSCALE_WG_REGS64, RINGSCALE_WG_OUT64(d), 64, 65, 66,
                               67, 68, 69, 70);
        else
            RINGSCALE_WGMMA_RS("f16", 128, RINGSCALE_WG_REGS64, RINGSCALE_WG_OUT64(d), 64, 65, 66,
                               67, 68, 69, 70);
    }
#else
    __trap();
#endif
}

// ---- mbarriers -----------------------------------------------------------------------------

/// Initialise the 8-byte shared-memory barrier `bar` for `count` arrivals per phase. One
/// thread calls it; make it visible with mbarrier_init_fence() and a block barrier.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
                 : "memory");
#endif
}

/// Make initialised mbarriers visible to the async proxy (TMA) before first use.
__device__ __forceinline__ void mbarrier_init_fence() {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

/// One arrival on `bar` (release semantics for this thread's prior writes).
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
#if RINGSCALE_SM90A_DEVICE
    asm volatile(
        "{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(smem_u32(bar))
        : "memory");
#endif
}

/// One arrival on `bar` that also expects `bytes` more bytes of asynchronous (TMA)
/// transactions in the current phase: the phase completes when both counts are met.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
#if RINGSCALE_SM90A_DEVICE
    asm volatile(
        "{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(
            smem_u32(bar)),
        "r"(bytes)
        : "memory");
#endif
}

/// True once the phase of parity `parity` (0 or 1) of `bar` has completed (acquire).
__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
#if RINGSCALE_SM90A_DEVICE
    std::uint32_t done = 0;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(smem_u32(bar)), "r"(parity)
                 : "memory");
    return done != 0;
#else
    return true;
#endif
}

/// Block until the phase of parity `parity` of `bar` has completed. Phases alternate
/// 0, 1, 0, ...: the n-th use (from 0) of a barrier waits on parity n % 2.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
    while (!mbarrier_try_wait_parity(bar, parity)) {
    }
}

// ---- TMA -----------------------------------------------------------------------------------

/// Prefetch a tensor map (a __grid_constant__ kernel parameter) into the descriptor cache.
__device__ __forceinline__ void tma_prefetch_desc(const CUtensorMap* map) {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map))
                 : "memory");
#endif
}

/// Load the box of a 3-D tensor map at coordinates (c0 innermost, c1, c2) into shared memory
/// at `dst` (1024-byte aligned for 128B swizzle); completes `box bytes` of transactions on
/// `bar` (elements out of the tensor are zero-filled and still counted). One thread issues it.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            int c0, int c1, int c2) {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_u32(dst)),
                 "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
                 "r"(smem_u32(bar))
                 : "memory");
#endif
}

/// Order this thread's generic-proxy shared-memory writes before later async-proxy accesses
/// (TMA stores, wgmma reading smem the threads wrote), and vice versa.
__device__ __forceinline__ void fence_proxy_async() {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// ---- registers and barriers ----------------------------------------------------------------

/// Raise this warp's register allocation to `regs` (a multiple of 8 in 24..256); every warp
/// of a warpgroup must call it with the same value.
template <int regs>
__device__ __forceinline__ void setmaxnreg_inc() {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(regs));
#endif
}

/// Lower this warp's register allocation to `regs`, handing the rest to the other warps.
template <int regs>
__device__ __forceinline__ void setmaxnreg_dec() {
#if RINGSCALE_SM90A_DEVICE
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(regs));
#endif
}

/// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads (a multiple of 32):
/// wait until all have arrived.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// Index of this thread's warpgroup (128 threads) in the block, uniform across the warpgroup.
__device__ __forceinline__ int warpgroup_index() {
    return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
}

} // namespace ringscale::kernels::cuda::sm90
