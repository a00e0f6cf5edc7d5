// The sm_90a attention forward (declared in attention_sm90.cuh): FlashAttention-3's
// structure in raw PTX. A block owns 128 query rows of one (batch, head) and three
// warpgroups: the producer (registers lowered to 24) issues TMA loads of Q once and of the
// K/V tiles through a two-stage mbarrier ring; two consumers (registers raised to 240), 64
// rows each, compute S = Q K^T with wgmma (both operands in shared memory), the online
// softmax in registers, and O += P V with wgmma (P in registers as the A operand), then merge
// into the running O/LSE in global memory exactly as the sm80 kernel.
//
// Not yet: the softmax of one tile overlapped with the GEMMs of the next (FA3's intra-
// warpgroup pipelining), a persistent tile scheduler, TMA descriptor caching across calls.
// Compile-checked for sm_90a; NOT YET RUN ON A GPU: correctness and speed are unverified.
#include "kernels/cuda/attention_fwd_sm90.cuh"
#include "kernels/cuda/attention_path.hpp"
#include "kernels/cuda/attention_sm90.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/tma_desc.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace sm90 {
namespace {

/// Shared memory of a block, carved from the dynamic allocation rounded up to 1024 bytes
/// (the 128-byte swizzle atom's alignment): Q, then the K and V stages, each tile stored as
/// its 64-column blocks one after the other ([D / 64][rows][64], as TMA writes them).
template <typename T, int D>
struct fwd_smem {
    using cfg = fwd_cfg<D>;
    unsigned char* base; // 1024-byte aligned

    __device__ explicit fwd_smem(unsigned char* raw)
        : base(reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) &
                                                ~std::uintptr_t{1023})) {}
    // Computed, not stored in arrays: a stage index known only at run time would put an
    // array of pointers on the stack.
    __device__ T* q() const { return reinterpret_cast<T*>(base); }
    __device__ T* k(int s) const {
        return reinterpret_cast<T*>(base + cfg::q_bytes + 2 * s * cfg::kv_bytes);
    }
    __device__ T* v(int s) const {
        return reinterpret_cast<T*>(base + cfg::q_bytes + (2 * s + 1) * cfg::kv_bytes);
    }
    __device__ fwd_barriers<cfg::stages>* bar() const {
        return reinterpret_cast<fwd_barriers<cfg::stages>*>(base + cfg::tiles_bytes);
    }
};

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
        tma_load_3d(sm.q() + c * cfg::rows * 64, tq, &sm.bar()->q_full, c * 64, i0, bh);
    for (int t = 0; t < tiles; ++t) {
        const int s = t % cfg::stages, use = t / cfg::stages;
        if (use > 0)
            mbarrier_wait(&sm.bar()->empty[s], (use - 1) & 1);
        mbarrier_arrive_expect_tx(&sm.bar()->k_full[s], cfg::kv_bytes);
        for (int c = 0; c < cfg::col_blocks; ++c)
            tma_load_3d(sm.k(s) + c * cfg::keys * 64, tk, &sm.bar()->k_full[s], c * 64,
                        t * cfg::keys, kvh);
        mbarrier_arrive_expect_tx(&sm.bar()->v_full[s], cfg::kv_bytes);
        for (int c = 0; c < cfg::col_blocks; ++c)
            tma_load_3d(sm.v(s) + c * cfg::keys * 64, tv, &sm.bar()->v_full[s], c * 64,
                        t * cfg::keys, kvh);
    }
}

/// S = Q K^T for the warpgroup's 64 rows against the key tile in `sk` (both K-major):
/// D / 16 wgmma steps, each 32 bytes further into a 64-column block.
template <typename T, int D>
__device__ __forceinline__ void fwd_scores(float (&s)[fwd_cfg<D>::keys / 2], const T* sq_wg,
                                           const T* sk) {
    using cfg = fwd_cfg<D>;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        const int c = kk / 4, off = (kk % 4) * 16; // elements into the column block
        const std::uint64_t da = wgmma_desc_k_major(sq_wg + c * cfg::rows * 64 + off);
        const std::uint64_t db = wgmma_desc_k_major(sk + c * cfg::keys * 64 + off);
        wgmma_ss<cfg::keys, T>(s, da, db, kk > 0 ? 1 : 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operand(s);
}

/// O += P V for the warpgroup: V MN-major (d contiguous), 16 keys (2048 bytes) per step.
template <typename T, int D>
__device__ __forceinline__ void
fwd_pv(float (&o)[D / 2], const std::uint32_t (&pa)[fwd_cfg<D>::keys / 16][4], const T* sv) {
    using cfg = fwd_cfg<D>;
    wgmma_fence_operand(o);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < cfg::keys / 16; ++kk) {
        const std::uint64_t db = wgmma_desc_mn_major(sv + kk * 16 * 64, cfg::keys * 128);
        wgmma_rs<D, T, 1>(o, pa[kk], db, 1);
    }
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operand(o);
}

/// A consumer warpgroup (wg 0 or 1: rows i0 + 64 wg ..): every tile is waited for and
/// released, tiles no row of the warpgroup sees are not computed.
template <typename T, int D>
__device__ void fwd_consume(fwd_smem<T, D>& sm, const fwd_params& p, std::int64_t i0, int wg,
                            std::int64_t bh, int tiles) {
    using cfg = fwd_cfg<D>;
    const int tid = static_cast<int>(threadIdx.x) - 128 * (wg + 1);
    const int warp = tid / 32, lane = tid % 32;
    const attention_positions& pos = p.pos;
    const std::int64_t r0 = i0 + 64 * wg, w0 = r0 + 16 * warp;
    const bool wg_live = r0 < p.q_len;
    const std::int64_t wg_first = wg_live ? attn::position_at(pos.q_pos, pos.q_first, r0) : 0;
    const std::int64_t wg_last =
        wg_live ? attn::position_at(pos.q_pos, pos.q_first, min(r0 + 63, p.q_len - 1)) : 0;
    fwd_rows_state<D> st;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const std::int64_t row = w0 + lane / 4 + 8 * r;
        st.row_pos[r] = row < p.q_len ? attn::position_at(pos.q_pos, pos.q_first, row) : wg_last;
        st.row_max[r] = -INFINITY;
        st.row_sum[r] = 0.0f;
    }
#pragma unroll
    for (int k = 0; k < D / 2; ++k)
        st.o[k] = 0.0f;
    const T* sq_wg = sm.q() + wg * 64 * 64; // 64 rows of 128 bytes into each column block
    mbarrier_wait(&sm.bar()->q_full, 0);
    for (int t = 0; t < tiles; ++t) {
        const int s = t % cfg::stages;
        const auto phase = static_cast<std::uint32_t>((t / cfg::stages) & 1);
        const std::int64_t j0 = static_cast<std::int64_t>(t) * cfg::keys;
        const bool skip =
            !wg_live || (p.causal && attn::position_at(pos.k_pos, pos.k_first, j0) > wg_last);
        const bool full = j0 + cfg::keys <= p.k_len &&
                          (!p.causal || attn::position_at(pos.k_pos, pos.k_first,
                                                          j0 + cfg::keys - 1) <= wg_first);
        mbarrier_wait(&sm.bar()->k_full[s], phase);
        std::uint32_t pa[cfg::keys / 16][4];
        if (!skip) {
            float sc[cfg::keys / 2];
            fwd_scores<T, D>(sc, sq_wg, sm.k(s));
            if (!full)
                fwd_mask<cfg::keys>(p, sc, j0, st.row_pos, lane);
            fwd_softmax<D, cfg::keys>(sc, st, p.scale_log2);
            fwd_pack_p<T, cfg::keys>(pa, sc);
        }
        mbarrier_wait(&sm.bar()->v_full[s], phase);
        if (!skip)
            fwd_pv<T, D>(st.o, pa, sm.v(s));
        __syncwarp();
        if (lane == 0)
            mbarrier_arrive(&sm.bar()->empty[s]); // this warp no longer reads stage s
    }
    fwd_merge<D>(p, st, bh, w0, lane);
}

template <typename T, int D>
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
        fwd_consume<T, D>(sm, p, i0, wg - 1, bh, tiles);
    }
#else
    __trap(); // launched only where attention_path resolved to sm90 (a 9.0 device, 90a built)
#endif
}

template <typename T, int D>
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
    const auto kernel = attention_fwd_sm90_kernel<T, D>;
    RINGSCALE_CUDA_CALL(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes));
    const dim3 grid(static_cast<unsigned>((shape.q_len + cfg::rows - 1) / cfg::rows),
                    static_cast<unsigned>(bh));
    kernel<<<grid, cfg::threads, cfg::smem_bytes, stream>>>(tq, tk, tv, p);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace
} // namespace sm90

bool attention_fwd_sm90_supports(const attention_shape& shape) {
    return shape.head_dim == 64 || shape.head_dim == 128;
}

void attention_fwd_sm90(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const attention_positions& pos, float* o,
                        float* lse, void* stream) {
    attn::check_attention_launch("attention_fwd_sm90", shape, {q, k, v}, {o});
    if (!sm90_compiled())
        throw config_error("attention_fwd_sm90: this ringscale was built without the sm_90a "
                           "target (configure with CMAKE_CUDA_ARCHITECTURES including 90a)");
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
    using bf16 = __nv_bfloat16;
    if (dtype == attn_dtype::bf16)
        shape.head_dim == 64 ? sm90::launch<bf16, 64>(shape, dtype, q, k, v, p, s)
                             : sm90::launch<bf16, 128>(shape, dtype, q, k, v, p, s);
    else
        shape.head_dim == 64 ? sm90::launch<__half, 64>(shape, dtype, q, k, v, p, s)
                             : sm90::launch<__half, 128>(shape, dtype, q, k, v, p, s);
}

} // namespace ringscale::kernels::cuda
