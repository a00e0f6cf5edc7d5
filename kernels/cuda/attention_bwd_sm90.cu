// Hopper (sm_90a) flash-attention backward over one K/V block: the same contract as the
// sm_80 kernel (attention_bwd.cu, attention_bwd_cuda), built FlashAttention-3 style from
// wgmma, TMA and an mbarrier pipeline with a producer warpgroup and two consumer
// warpgroups. Geometry and the per-tile GEMMs: attention_bwd_sm90.cuh. Our own code on raw
// PTX (sm90_primitives.cuh); no CUTLASS.
//
// STATUS: compile-checked for sm_90a only (ptxas: 168 registers at entry, setmaxnreg 24 /
// 240, 0 spills, no stack, for bf16/fp16 x D 64/128); NOT YET RUN ON A GPU. A GPU session
// should check, in this order:
//  1. Correctness: tests/kernels/cuda/test_attention_gpu.cpp's backward cases with the path forced
//  to sm90
//     (set_attention_path(attn_path::sm90) / --attn-kernel sm90): D = 64 first (no
//     cross-warpgroup dS^T exchange), then 128; bf16, fp16; causal and not; GQA; zigzag
//     positions; q_len / k_len not multiples of 64 / 128. A hang means an mbarrier count or
//     parity is wrong (kv: 1 arrival + tx; full[s]: 1 + 32 producer arrivals + tx; empty[s]:
//     8 consumer warps; parities from attention_bwd_sm90_plan.hpp).
//  2. tests/kernels/cuda/test_attention_bwd_sm90_pieces_gpu.cu runs scores and grads alone against
//  exact
//     CPU products and names the failing GEMM. If S^T / dP^T are wrong: the K-major descriptors (K,
//     V rows 64 w.., Q, dO; 32-byte steps inside a 64-column block). If only dV / dK / dQ are
//     wrong: the MN-major descriptors (LBO = 64-column block stride, SBO = 1024) and trans_a /
//     trans_b, or the RS A-fragment packing (pack_k64).
//     tests/kernels/cuda/test_attention_bwd_sm90_plan.cpp checks these offsets against the PTX
//     canonical layouts on the CPU, not against the hardware.
//  3. Registers: after any change, -Xptxas -v must still show 0 spills (the consumers sit
//     near their 240). Today ptxas also prints, for D = 128 only, "(C7512) Potential
//     Performance Loss: wgmma.mma_async instructions are serialized due to insufficient
//     register resources": correct, but the grads group runs its wgmmas one after another;
//     and "used 16 barriers" for D = 64 (bar_id = 1 + w is a run-time value, so ptxas
//     reserves all 16 named barriers: harmless at one block per SM, which the shared memory
//     forces anyway).
//  4. Speed (tests/bench/attention_gpu.sh): dQ goes out as 2048 float2 atomics per
//     warpgroup and tile (FA3 stages it in shared memory and adds it with one TMA bulk
//     reduce per tile); the S / dP GEMMs of tile n + 1 do not yet overlap the softmax of
//     tile n; Q and dO share one barrier; fully masked key halves on diagonal tiles still
//     run their GEMMs (masked to zero).
#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_bwd_sm90.cuh"
#include "kernels/cuda/attention_sm90.cuh"
#include "kernels/cuda/tma_desc.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

#include <string>

namespace ringscale::kernels::cuda {

namespace {

using namespace bwd90;
using sm90::mbarrier_arrive;
using sm90::mbarrier_wait;
using sm90::tma_load_3d;

/// The producer warp: K and V once, then for each (query head, tile) the stage's Q and dO by
/// TMA and its per-row statistics by plain loads.
template <int D>
__device__ void produce(const params& p, unsigned char* sm, const CUtensorMap* tm_q,
                        const CUtensorMap* tm_k, const CUtensorMap* tm_v, const CUtensorMap* tm_do,
                        std::int64_t kv_row, std::int64_t j0, const walk& wk) {
    using L = layout<D>;
    auto* bars = reinterpret_cast<std::uint64_t*>(sm + L::bars);
    std::uint64_t* kv_bar = bars;
    std::uint64_t* full = bars + 1;
    std::uint64_t* empty = bars + 1 + stages;
    const int lane = static_cast<int>(threadIdx.x % 32);
    if (lane == 0) {
        sm90::mbarrier_arrive_expect_tx(kv_bar, 2 * L::kv_tile);
        for (int c = 0; c < D / 64; ++c) {
            tma_load_3d(sm + L::k + col_block_offset(c, keys), tm_k, kv_bar, 64 * c,
                        static_cast<int>(j0), static_cast<int>(kv_row));
            tma_load_3d(sm + L::v + col_block_offset(c, keys), tm_v, kv_bar, 64 * c,
                        static_cast<int>(j0), static_cast<int>(kv_row));
        }
    }
    const std::int64_t group = p.heads / p.kv_heads, b = kv_row / p.kv_heads;
    std::int64_t it = 0;
    for (std::int64_t g = 0; g < group; ++g) {
        const std::int64_t bh = b * p.heads + (kv_row % p.kv_heads) * group + g;
        for (std::int64_t tile = wk.tile0; tile < wk.tiles; ++tile, ++it) {
            const int s = stage_of(it);
            mbarrier_wait(empty + s, empty_parity(it)); // the first round passes at once
            const std::int64_t i0 = tile * rows;
            if (lane == 0) { // TMA first: the statistics' loads overlap it
                sm90::mbarrier_arrive_expect_tx(full + s, 2 * L::q_tile);
                for (int c = 0; c < D / 64; ++c) {
                    tma_load_3d(sm + L::q + s * L::q_tile + col_block_offset(c, rows), tm_q,
                                full + s, 64 * c, static_cast<int>(i0), static_cast<int>(bh));
                    tma_load_3d(sm + L::d_o + s * L::q_tile + col_block_offset(c, rows), tm_do,
                                full + s, 64 * c, static_cast<int>(i0), static_cast<int>(bh));
                }
            }
            const stage_stats st(sm + L::stats + s * stats_bytes);
            for (int r = lane; r < rows; r += 32) {
                const std::int64_t row = i0 + r;
                const bool valid = row < p.q_len;
                const float lse = valid ? p.lse[bh * p.q_len + row] : -INFINITY;
                st.lse2[r] = lse == -INFINITY ? INFINITY : lse * attn::log2e;
                st.delta[r] = valid ? p.delta[bh * p.q_len + row] : 0.0f;
                st.qpos[r] =
                    attn::position_at(p.pos.q_pos, p.pos.q_first, valid ? row : p.q_len - 1);
            }
            mbarrier_arrive(full + s); // releases this lane's statistics
        }
    }
}

/// A consumer warpgroup (key half w): the walk over (query head, tile) in the producer's
/// order, then its dK, dV rows added to global memory.
template <typename T, int D>
__device__ void consume(const params& p, unsigned char* sm, std::int64_t kv_row, std::int64_t j0,
                        const walk& wk, int w) {
    using L = layout<D>;
    auto* bars = reinterpret_cast<std::uint64_t*>(sm + L::bars);
    const int lane = static_cast<int>(threadIdx.x % 32),
              warp = static_cast<int>(threadIdx.x / 32) % 4;
    const std::int64_t half0 = j0 + 64 * w;
    auto* key_pos = reinterpret_cast<std::int64_t*>(sm + L::key_pos) + 64 * w;
    const key_half kh = store_key_pos(p, key_pos, half0, warp, lane);
    const std::int64_t group = p.heads / p.kv_heads, b = kv_row / p.kv_heads;
    // D = 128: both halves fill one dS^T buffer (barrier over 256 threads); D = 64: each
    // half reads only its own rows (barrier per warpgroup).
    const int bar_id = D == 128 ? 1 : 1 + w, bar_threads = D == 128 ? 256 : 128;
    float dk[D / 2] = {}, dv[D / 2] = {};
    mbarrier_wait(bars, 0); // K, V landed
    std::int64_t it = 0;
    for (std::int64_t g = 0; g < group; ++g) {
        const std::int64_t bh = b * p.heads + (kv_row % p.kv_heads) * group + g;
        for (std::int64_t tile = wk.tile0; tile < wk.tiles; ++tile, ++it) {
            const int s = stage_of(it);
            mbarrier_wait(bars + 1 + s, full_parity(it));
            const stage_stats st(sm + L::stats + s * stats_bytes);
            const std::int64_t i0 = tile * rows;
            float sacc[32], dpacc[32];
            scores<T, D>(sacc, dpacc, sm, w, s);
            const bool full =
                i0 + rows <= p.q_len && kh.full && (!p.causal || kh.last_pos <= st.qpos[0]);
            probs_and_ds(p, sacc, dpacc, st, key_pos, !full, warp, lane);
            std::uint32_t pa[4][4], dsa[4][4];
            pack_k64<T>(pa, sacc);
            pack_k64<T>(dsa, dpacc);
            unsigned char* ds = sm + L::ds + (it & 1) * L::ds_tile;
            store_ds(ds, dsa, w, warp, lane);
            sm90::fence_proxy_async(); // generic-proxy stores -> wgmma (async proxy) reads
            sm90::named_barrier_sync(bar_id, bar_threads);
            float dq[32];
            grads<T, D>(dv, dk, dq, pa, dsa, sm, ds, w, s);
            __syncwarp();
            if (lane == 0)
                mbarrier_arrive(bars + 1 + stages + s); // Q, dO, stats of stage s consumed
            add_dq<D>(p, dq, bh, i0, D == 128 ? 64 * w : 0, warp, lane);
        }
    }
    add_rows<D>(p, p.dk, dk, kv_row, half0, warp, lane);
    add_rows<D>(p, p.dv, dv, kv_row, half0, warp, lane);
}

template <typename T, int D>
__global__ void __launch_bounds__(threads, 1)
    attention_bwd_sm90_kernel(const __grid_constant__ CUtensorMap tm_q,
                              const __grid_constant__ CUtensorMap tm_k,
                              const __grid_constant__ CUtensorMap tm_v,
                              const __grid_constant__ CUtensorMap tm_do, const params p) {
#if RINGSCALE_SM90A_DEVICE
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    auto* sm = reinterpret_cast<unsigned char*>(
        (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
    const std::int64_t kv_row = blockIdx.y; // b * kv_heads + kv head
    const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * keys;
    const walk wk = make_walk(p.q_len, first_visible_row(p, j0), p.heads / p.kv_heads);
    if (wk.steps == 0)
        return; // no query row sees these keys: nothing to add (uniform over the block)
    auto* bars = reinterpret_cast<std::uint64_t*>(sm + layout<D>::bars);
    if (threadIdx.x == 0) {
        sm90::mbarrier_init(bars, 1);
        for (int s = 0; s < stages; ++s) {
            sm90::mbarrier_init(bars + 1 + s, full_arrivals);
            sm90::mbarrier_init(bars + 1 + stages + s, empty_arrivals);
        }
        sm90::mbarrier_init_fence();
    }
    __syncthreads();
    const int wg = sm90::warpgroup_index();
    if (wg == 0) {
        sm90::setmaxnreg_dec<producer_regs>();
        if (threadIdx.x < 32)
            produce<D>(p, sm, &tm_q, &tm_k, &tm_v, &tm_do, kv_row, j0, wk);
    } else {
        sm90::setmaxnreg_inc<consumer_regs>();
        consume<T, D>(p, sm, kv_row, j0, wk, wg - 1);
    }
#else
    __trap(); // launched only where resolve_attention_path chose sm90
#endif
}

template <typename T, int D>
void launch(const attention_shape& shape, attn_dtype dtype, const void* q, const void* k,
            const void* v, const void* d_o, const params& p, cudaStream_t stream) {
    const auto bh = static_cast<std::uint64_t>(shape.batch * shape.heads);
    const auto bkv = static_cast<std::uint64_t>(shape.batch * shape.kv_heads);
    const auto sq = static_cast<std::uint64_t>(shape.q_len);
    const auto sk = static_cast<std::uint64_t>(shape.k_len);
    // Boxes of 64 columns (one 128-byte swizzle atom wide); rows past the sequence read 0.
    const CUtensorMap tm_q = make_tma_desc_3d(dtype, q, bh, sq, D, rows, 64);
    const CUtensorMap tm_k = make_tma_desc_3d(dtype, k, bkv, sk, D, keys, 64);
    const CUtensorMap tm_v = make_tma_desc_3d(dtype, v, bkv, sk, D, keys, 64);
    const CUtensorMap tm_do = make_tma_desc_3d(dtype, d_o, bh, sq, D, rows, 64);
    constexpr int smem_bytes = layout<D>::alloc;
    static_assert(smem_bytes <= smem_limit, "attention_bwd_sm90: shared memory over the limit");
    const auto kernel = attention_bwd_sm90_kernel<T, D>;
    RINGSCALE_CUDA_CALL(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
    const dim3 grid(static_cast<unsigned>((shape.k_len + keys - 1) / keys),
                    static_cast<unsigned>(bkv));
    kernel<<<grid, threads, smem_bytes, stream>>>(tm_q, tm_k, tm_v, tm_do, p);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace

bool attention_bwd_sm90_supports(const attention_shape& shape) {
    return bwd90::supported(shape);
}

void attention_bwd_sm90(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const void* d_o, const float* lse,
                        const float* delta, const attention_positions& pos, float* dq, float* dk,
                        float* dv, void* stream) {
    attn::check_attention_launch("attention_bwd_sm90", shape, {q, k, v, d_o}, {dq, dk, dv});
    RINGSCALE_REQUIRE(sm90_compiled(),
                      "attention_bwd_sm90: this ringscale was built without the sm_90a target "
                      "(configure with CMAKE_CUDA_ARCHITECTURES including 90a)");
    RINGSCALE_REQUIRE(bwd90::supported(shape),
                      "attention_bwd_sm90: shape outside the kernel's limits (head_dim 64 or "
                      "128, batch * kv_heads <= 65535, lengths below 2^31, no mask beyond "
                      "causal)");
    int device = 0, major = 0, minor = 0;
    RINGSCALE_CUDA_CALL(cudaGetDevice(&device));
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    RINGSCALE_REQUIRE(major == 9 && minor == 0,
                      "attention_bwd_sm90: needs a compute capability 9.0 device, this is " +
                          std::to_string(major) + "." + std::to_string(minor));
    if (shape.q_len == 0 || shape.k_len == 0)
        return;
    const float scale = attention_scale(shape);
    const params p{lse,         delta,       dq,          dk,
                   dv,          pos,         shape.heads, shape.kv_heads,
                   shape.q_len, shape.k_len, scale,       scale * attn::log2e,
                   shape.causal};
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype::bf16)
        shape.head_dim == 64 ? launch<__nv_bfloat16, 64>(shape, dtype, q, k, v, d_o, p, s)
                             : launch<__nv_bfloat16, 128>(shape, dtype, q, k, v, d_o, p, s);
    else
        shape.head_dim == 64 ? launch<__half, 64>(shape, dtype, q, k, v, d_o, p, s)
                             : launch<__half, 128>(shape, dtype, q, k, v, d_o, p, s);
}

} // namespace ringscale::kernels::cuda
