// The sm_90a attention forward (declared in attention_sm90.cuh): FlashAttention-3's
// structure in raw PTX. A block owns 128 query rows of one (batch, head) and three
// warpgroups: the producer (registers lowered to 24) issues TMA loads of Q once and of the
// K/V tiles through a two-stage mbarrier ring; two consumers (registers raised to 240), 64
// rows each, compute S = Q K^T with wgmma (both operands in shared memory), the online
// softmax in registers, and O += P V with wgmma (P in registers as the A operand), then merge
// into the running O/LSE in global memory exactly as the sm80 kernel.
//
// Two consumer schedules: overlapped (default; FA3's intra-warpgroup pipelining, the
// softmax of tile t while P V of tile t - 1 runs) and serial (RINGSCALE_SM90_OVERLAP=0, to
// tell a pipelining bug from a layout bug). Not yet: a persistent tile scheduler, explicit
// ping-pong ordering of the two consumers, TMA descriptor caching across calls.
// Compile-checked for sm_90a (ptxas: 168 registers at entry, setmaxnreg 24 / 240, 0 spills,
// no stack, no wgmma-serialisation notes, for bf16/fp16 x D 64/128 x both schedules); NOT YET
// RUN ON A GPU: correctness and speed are unverified.
//
// GPU checklist (a review against the PTX ISA found the descriptors, parities and arrival
// counts consistent; these are what a CPU cannot settle):
//  1. tests/kernels/cuda/test_sm90_primitives_gpu.cu first (TMA box + swizzle + zero fill, then S =
//  Q K^T
//     and O = P V through this file's own issue functions); the CPU twin of its offsets is
//     tests/kernels/cuda/test_attention_fwd_sm90_plan.cpp. Then test_cuda_attention_gpu's forward
//     cases with the path forced to sm90, RINGSCALE_SM90_OVERLAP=0 first (serial), then the
//     default.
//  2. A hang means a count or parity: q_full 1 arrival + q_bytes tx; k_full[s], v_full[s] 1 +
//     kv_bytes tx each (TMA counts a box's zero-filled rows, so partial tiles need no other
//     count); empty[s] 8 = lane 0 of each consumer warp, for EVERY tile < tiles (unseen ones
//     in the tail loop too); tile t waits parity (t / 2) & 1, the producer (t / 2 - 1) & 1.
//  3. Question: serial passes but overlap fails. The overlap keeps P (pa) and O in registers
//     read by an in-flight RS wgmma while the softmax runs; only O gets
//     wgmma_fence_operand. ptxas tracks wgmma register operands (it would insert a wait and
//     print a C75xx note: none today), but try wgmma_fence_operand(pa) after the issue and
//     after wait<0> first.
//  4. Question: the producer's warps 1..3 and lanes 1..31 exit right after setmaxnreg.dec
//     while thread 0 keeps issuing TMA (FlashAttention-3 does the same). Under
//     compute-sanitizer --tool synccheck / racecheck this should stay clean.
//  5. Question (design, for the lead): --attn-kernel sm90 with a shape fwd90::supported
//     refuses (batch * heads > 65535, lengths >= 2^31) silently runs sm80 in
//     attention_fwd_cuda; attention_fwd_sm90 called directly throws config_error.
#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_fwd_sm90.cuh"
#include "kernels/cuda/attention_fwd_sm90_plan.hpp"
#include "kernels/cuda/attention_sm90.cuh"
#include "kernels/cuda/tma_desc.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cstdlib>
#include <cuda_runtime.h>
#include <string>

namespace ringscale::kernels::cuda {

namespace sm90 {
namespace {

/// The producer: one thread loads Q, then K and V tile t into stage t % stages once the
/// consumers released that stage's previous tile.
template <typename T, int D>
__device__ void fwd_produce(fwd_smem<T, D>& sm, const CUtensorMap* tq, const CUtensorMap* tk,
                            const CUtensorMap* tv, int i0, int bh, int kvh, int tiles) {
    using cfg = fwd_cfg<D>;
    tma_prefetch_desc(tq);
    tma_prefetch_desc(tk);
    tma_prefetch_desc(tv);
    mbarrier_arrive_expect_tx(&sm.bar()->q_full, cfg::q_bytes);
    for (int c = 0; c < cfg::col_blocks; ++c)
        tma_load_3d(sm.bytes(cfg::L::q) + fwd90::col_block_offset(c, cfg::rows), tq,
                    &sm.bar()->q_full, c * 64, i0, bh);
    for (int t = 0; t < tiles; ++t) {
        const int s = t % cfg::stages, use = t / cfg::stages;
        if (use > 0)
            mbarrier_wait(&sm.bar()->empty[s], (use - 1) & 1);
        mbarrier_arrive_expect_tx(&sm.bar()->k_full[s], cfg::kv_bytes);
        for (int c = 0; c < cfg::col_blocks; ++c)
            tma_load_3d(sm.bytes(cfg::L::k(s)) + fwd90::col_block_offset(c, cfg::keys), tk,
                        &sm.bar()->k_full[s], c * 64, t * cfg::keys, kvh);
        mbarrier_arrive_expect_tx(&sm.bar()->v_full[s], cfg::kv_bytes);
        for (int c = 0; c < cfg::col_blocks; ++c)
            tma_load_3d(sm.bytes(cfg::L::v(s)) + fwd90::col_block_offset(c, cfg::keys), tv,
                        &sm.bar()->v_full[s], c * 64, t * cfg::keys, kvh);
    }
}

/// A consumer thread's state before the first tile: O = 0, no maximum, no sum.
template <int D>
__device__ __forceinline__ void fwd_init_state(fwd_rows_state<D>& st, const fwd_params& p,
                                               const fwd_wg& w) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const std::int64_t row = w.w0 + w.lane / 4 + 8 * r;
        st.row_pos[r] = row < p.q_len ? attn::position_at(p.pos.q_pos, p.pos.q_first, row) : w.last;
        st.row_max[r] = -INFINITY;
        st.row_sum[r] = 0.0f;
    }
#pragma unroll
    for (int k = 0; k < D / 2; ++k)
        st.o[k] = 0.0f;
}

/// Scores of tile t into P (masked where partial, softmax, alpha for O) once S is complete.
template <int D>
__device__ __forceinline__ void fwd_tile_softmax(float (&sc)[fwd_cfg<D>::keys / 2],
                                                 fwd_rows_state<D>& st, const fwd_params& p,
                                                 const fwd_wg& w, int t, float (&alpha)[2]) {
    constexpr int keys = fwd_cfg<D>::keys;
    const std::int64_t j0 = static_cast<std::int64_t>(t) * keys;
    if (!fwd_tile_full<keys>(p, w, j0))
        fwd_mask<keys>(p, sc, j0, st.row_pos, w.lane);
    fwd_softmax<D, keys>(sc, st, p.scale_log2, alpha);
}

/// S = Q K^T of the tile in stage buffer `k` into sc, complete on return (nothing else of
/// this warpgroup's wgmma may be in flight).
template <typename T, int D>
__device__ __forceinline__ void fwd_scores_now(float (&sc)[fwd_cfg<D>::keys / 2],
                                               const fwd_smem<T, D>& sm, int wg, const T* k) {
    wgmma_fence();
    fwd_scores_issue<T, D>(sc, sm.q(), wg, k);
    wgmma_wait<0>();
    wgmma_fence_operand(sc);
}

/// O += P V with the tile in stage buffer `v`, complete on return (nothing else in flight).
template <typename T, int D>
__device__ __forceinline__ void
fwd_pv_now(fwd_rows_state<D>& st, const std::uint32_t (&pa)[fwd_cfg<D>::keys / 16][4], const T* v) {
    wgmma_fence_operand(st.o);
    wgmma_fence();
    fwd_pv_issue<T, D>(st.o, pa, v);
    wgmma_wait<0>();
    wgmma_fence_operand(st.o);
}

/// A consumer warpgroup (wg 0 or 1: rows i0 + 64 wg ..) that finishes each tile before the
/// next: S, softmax, P V. Every tile is waited for and released; unseen ones not computed.
/// The simple schedule (RINGSCALE_SM90_OVERLAP=0), kept to tell a pipelining bug apart.
template <typename T, int D>
__device__ void fwd_consume_serial(const fwd_smem<T, D>& sm, const fwd_params& p, std::int64_t i0,
                                   int wg, std::int64_t bh, int tiles) {
    using cfg = fwd_cfg<D>;
    const fwd_wg w = make_fwd_wg(p, i0, wg);
    const int seen = fwd_tiles_seen<cfg::keys>(p, w, tiles);
    fwd_rows_state<D> st;
    fwd_init_state<D>(st, p, w);
    mbarrier_wait(&sm.bar()->q_full, 0);
    for (int t = 0; t < tiles; ++t) {
        const int s = t % cfg::stages;
        const auto phase = static_cast<std::uint32_t>((t / cfg::stages) & 1);
        mbarrier_wait(&sm.bar()->k_full[s], phase);
        mbarrier_wait(&sm.bar()->v_full[s], phase);
        if (t < seen) {
            float sc[cfg::keys / 2];
            std::uint32_t pa[cfg::keys / 16][4];
            float alpha[2];
            fwd_scores_now<T, D>(sc, sm, wg, sm.k(s));
            fwd_tile_softmax<D>(sc, st, p, w, t, alpha);
            fwd_rescale_o<D>(st, alpha);
            fwd_pack_p<T, cfg::keys>(pa, sc);
            fwd_pv_now<T, D>(st, pa, sm.v(s));
        }
        fwd_release(&sm.bar()->empty[s], w.lane);
    }
    fwd_merge<D>(p, st, bh, w.w0, w.lane);
}

/// As fwd_consume_serial, with FlashAttention-3's intra-warpgroup pipelining: S of tile t is
/// issued, then P V of tile t - 1, and the softmax of tile t runs while that P V is in
/// flight; O is rescaled and P repacked only after it completes.
template <typename T, int D>
__device__ void fwd_consume_overlap(const fwd_smem<T, D>& sm, const fwd_params& p, std::int64_t i0,
                                    int wg, std::int64_t bh, int tiles) {
    using cfg = fwd_cfg<D>;
    const fwd_wg w = make_fwd_wg(p, i0, wg);
    const int seen = fwd_tiles_seen<cfg::keys>(p, w, tiles);
    fwd_rows_state<D> st;
    fwd_init_state<D>(st, p, w);
    auto phase = [](int t) { return static_cast<std::uint32_t>((t / cfg::stages) & 1); };
    float sc[cfg::keys / 2];
    std::uint32_t pa[cfg::keys / 16][4];
    float alpha[2];
    mbarrier_wait(&sm.bar()->q_full, 0);
    if (seen > 0) { // prologue: P of tile 0
        mbarrier_wait(&sm.bar()->k_full[0], 0);
        fwd_scores_now<T, D>(sc, sm, wg, sm.k(0));
        fwd_tile_softmax<D>(sc, st, p, w, 0, alpha); // O is 0: no rescale needed
        fwd_pack_p<T, cfg::keys>(pa, sc);
    }
    for (int t = 1; t < seen; ++t) {
        const int s = t % cfg::stages, sp = (t - 1) % cfg::stages;
        // Both waits before the issues: a wait loop between two wgmma groups makes ptxas
        // insert a warpgroup.arrive (C7519). V of tile t - 1 came with its K, long ago.
        mbarrier_wait(&sm.bar()->k_full[s], phase(t));
        mbarrier_wait(&sm.bar()->v_full[sp], phase(t - 1));
        wgmma_fence_operand(st.o);
        wgmma_fence();
        fwd_scores_issue<T, D>(sc, sm.q(), wg, sm.k(s));
        fwd_pv_issue<T, D>(st.o, pa, sm.v(sp));
        wgmma_wait<1>(); // S of tile t is done; P V of tile t - 1 may still run
        wgmma_fence_operand(sc);
        fwd_tile_softmax<D>(sc, st, p, w, t, alpha);
        wgmma_wait<0>();
        wgmma_fence_operand(st.o);
        fwd_release(&sm.bar()->empty[sp], w.lane);
        fwd_rescale_o<D>(st, alpha);
        fwd_pack_p<T, cfg::keys>(pa, sc);
    }
    if (seen > 0) { // epilogue: P V of the last seen tile
        const int last = seen - 1, s = last % cfg::stages;
        mbarrier_wait(&sm.bar()->v_full[s], phase(last));
        fwd_pv_now<T, D>(st, pa, sm.v(s));
        fwd_release(&sm.bar()->empty[s], w.lane);
    }
    for (int t = seen; t < tiles; ++t) { // unseen tiles: only keep the ring turning
        const int s = t % cfg::stages;
        mbarrier_wait(&sm.bar()->k_full[s], phase(t));
        mbarrier_wait(&sm.bar()->v_full[s], phase(t));
        fwd_release(&sm.bar()->empty[s], w.lane);
    }
    fwd_merge<D>(p, st, bh, w.w0, w.lane);
}

template <typename T, int D, bool overlap>
__global__ void __launch_bounds__(fwd_cfg<D>::threads, 1)
    attention_fwd_sm90_kernel(const __grid_constant__ CUtensorMap tq,
                              const __grid_constant__ CUtensorMap tk,
                              const __grid_constant__ CUtensorMap tv, const fwd_params p) {
#if RINGSCALE_SM90A_DEVICE
    using cfg = fwd_cfg<D>;
    extern __shared__ unsigned char smem_raw[];
    fwd_smem<T, D> sm(smem_raw);
    const std::int64_t bh = blockIdx.y;
    const std::int64_t kvh = bh / p.heads * p.kv_heads + bh % p.heads / (p.heads / p.kv_heads);
    // Last query tiles first: under a causal mask they see the most keys.
    const std::int64_t i0 = static_cast<std::int64_t>(gridDim.x - 1 - blockIdx.x) * cfg::rows;
    const std::int64_t i_last = min(i0 + cfg::rows, p.q_len) - 1;
    const attention_positions& pos = p.pos;
    const std::int64_t k_end =
        p.causal ? attn::count_at_most(pos.k_pos, pos.k_first, p.k_len,
                                       attn::position_at(pos.q_pos, pos.q_first, i_last))
                 : p.k_len;
    const int tiles = static_cast<int>((k_end + cfg::keys - 1) / cfg::keys);
    if (tiles == 0)
        return; // no row of this block sees a key of this K/V block: O, LSE unchanged
    if (threadIdx.x == 0) {
        mbarrier_init(&sm.bar()->q_full, 1);
        for (int s = 0; s < cfg::stages; ++s) {
            mbarrier_init(&sm.bar()->k_full[s], 1);
            mbarrier_init(&sm.bar()->v_full[s], 1);
            mbarrier_init(&sm.bar()->empty[s], 8); // lane 0 of each consumer warp
        }
        mbarrier_init_fence();
    }
    __syncthreads();
    const int wg = warpgroup_index();
    if (wg == 0) {
        setmaxnreg_dec<cfg::producer_regs>();
        if (threadIdx.x == 0)
            fwd_produce<T, D>(sm, &tq, &tk, &tv, static_cast<int>(i0), static_cast<int>(bh),
                              static_cast<int>(kvh), tiles);
    } else {
        setmaxnreg_inc<cfg::consumer_regs>();
        if constexpr (overlap)
            fwd_consume_overlap<T, D>(sm, p, i0, wg - 1, bh, tiles);
        else
            fwd_consume_serial<T, D>(sm, p, i0, wg - 1, bh, tiles);
    }
#else
    __trap(); // launched only where attention_path resolved to sm90 (a 9.0 device, 90a built)
#endif
}

template <typename T, int D, bool overlap>
void launch(const attention_shape& shape, attn_dtype dtype, const void* q, const void* k,
            const void* v, const fwd_params& p, cudaStream_t stream) {
    using cfg = fwd_cfg<D>;
    const auto bh = static_cast<std::uint64_t>(shape.batch * shape.heads);
    const auto bhkv = static_cast<std::uint64_t>(shape.batch * shape.kv_heads);
    const auto sq = static_cast<std::uint64_t>(shape.q_len);
    const auto sk = static_cast<std::uint64_t>(shape.k_len);
    const CUtensorMap tq = make_tma_desc_3d(dtype, q, bh, sq, D, cfg::rows, 64);
    const CUtensorMap tk = make_tma_desc_3d(dtype, k, bhkv, sk, D, cfg::keys, 64);
    const CUtensorMap tv = make_tma_desc_3d(dtype, v, bhkv, sk, D, cfg::keys, 64);
    const auto kernel = attention_fwd_sm90_kernel<T, D, overlap>;
    RINGSCALE_CUDA_CALL(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes));
    const dim3 grid(static_cast<unsigned>((shape.q_len + cfg::rows - 1) / cfg::rows),
                    static_cast<unsigned>(bh));
    kernel<<<grid, cfg::threads, cfg::smem_bytes, stream>>>(tq, tk, tv, p);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

template <bool overlap>
void launch_typed(const attention_shape& shape, attn_dtype dtype, const void* q, const void* k,
                  const void* v, const fwd_params& p, cudaStream_t s) {
    using bf16 = __nv_bfloat16;
    if (dtype == attn_dtype::bf16)
        shape.head_dim == 64 ? launch<bf16, 64, overlap>(shape, dtype, q, k, v, p, s)
                             : launch<bf16, 128, overlap>(shape, dtype, q, k, v, p, s);
    else
        shape.head_dim == 64 ? launch<__half, 64, overlap>(shape, dtype, q, k, v, p, s)
                             : launch<__half, 128, overlap>(shape, dtype, q, k, v, p, s);
}

} // namespace
} // namespace sm90

bool sm90_overlap() {
    const char* env = std::getenv("RINGSCALE_SM90_OVERLAP");
    return !(env && std::string(env) == "0");
}

bool attention_fwd_sm90_supports(const attention_shape& shape) {
    return fwd90::supported(shape);
}

void attention_fwd_sm90(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const attention_positions& pos, float* o,
                        float* lse, void* stream) {
    attn::check_attention_launch("attention_fwd_sm90", shape, {q, k, v}, {o});
    if (!sm90_compiled())
        throw config_error("attention_fwd_sm90: this ringscale was built without the sm_90a "
                           "target (configure with CMAKE_CUDA_ARCHITECTURES including 90a)");
    RINGSCALE_REQUIRE(fwd90::supported(shape),
                      "attention_fwd_sm90: shape outside the kernel's limits (head_dim 64 or "
                      "128, batch * heads <= 65535, lengths below 2^31, no mask beyond causal)");
    // Elsewhere the kernel's image is __trap(): refuse before launching it (as the backward).
    int device = 0, major = 0, minor = 0;
    RINGSCALE_CUDA_CALL(cudaGetDevice(&device));
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    RINGSCALE_REQUIRE(major == 9 && minor == 0,
                      "attention_fwd_sm90: needs a compute capability 9.0 device, this is " +
                          std::to_string(major) + "." + std::to_string(minor));
    if (shape.q_len == 0 || shape.k_len == 0)
        return;
    const sm90::fwd_params p{o,
                             lse,
                             pos,
                             shape.heads,
                             shape.kv_heads,
                             shape.q_len,
                             shape.k_len,
                             attention_scale(shape) * attn::log2e,
                             shape.causal};
    const auto s = static_cast<cudaStream_t>(stream);
    if (sm90_overlap())
        sm90::launch_typed<true>(shape, dtype, q, k, v, p, s);
    else
        sm90::launch_typed<false>(shape, dtype, q, k, v, p, s);
}

} // namespace ringscale::kernels::cuda
