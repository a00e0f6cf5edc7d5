#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_bwd.cuh"
#include "kernels/cuda/attention_bwd_block.cuh"
#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_mask.cuh"
#include "kernels/cuda/attention_sm90.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

using namespace attn;

/// P^T (in place over S^T): exp2(S * scale * log2e - LSE * log2e), 0 where masked.
template <typename T, int D, bool masked>
__device__ __forceinline__ void bwd_probs(const bwd_args<masked>& p, float (&s)[bwd_rows / 8][4],
                                          const bwd_smem<T, D, masked>& sm, const key_rows& kr,
                                          bool partial, int lane) {
    const float* lse2 = sm.lse2;
    const std::int64_t* qpos = sm.qpos;
#pragma unroll
    for (int n = 0; n < bwd_rows / 8; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int col = n * 8 + 2 * (lane % 4) + (i & 1);
            const int r = i / 2;
            // lse2 is +inf for rows with no gradient (and rows past q_len): exp2(-inf) = 0.
            const float x = exp2f(s[n][i] * p.scale_log2 - lse2[col]);
            bool drop;
            if constexpr (masked)
                drop =
                    partial && (!kr.valid[r] ||
                                !mask_visible_in(p.mask, key_range{sm.key_lo[col], sm.key_hi[col]},
                                                 qpos[col], kr.pos[r]));
            else
                drop = partial && (!kr.valid[r] || (p.causal && kr.pos[r] > qpos[col]));
            s[n][i] = drop ? 0.0f : x;
        }
}

/// Accumulate c[16 x 64] += A-tile rows [row0, +16) x B-tile rows [0, 64), both tiles
/// [rows][D] in shared memory and contracted over D (c = A B^T): S^T = K Q^T, dP^T = V dO^T.
template <typename T, int D>
__device__ __forceinline__ void warp_abt(float (&c)[bwd_rows / 8][4], const T* a_tile, int row0,
                                         const T* b_tile, int lane) {
    // Not unrolled: unrolled, the compiler hoists every swizzled ldmatrix address out of the
    // query-tile loop and runs out of registers.
#pragma unroll 1
    for (int kk = 0; kk < D / 16; ++kk) {
        std::uint32_t a[4];
        load_a<D>(a, a_tile, row0, kk * 2, lane);
#pragma unroll
        for (int nb = 0; nb < bwd_rows / 16; ++nb) {
            std::uint32_t b[4];
            load_b_rows<D>(b, b_tile, nb * 16, kk * 2, lane);
            mma_16816<T>(c[2 * nb], a, b[0], b[1]);
            mma_16816<T>(c[2 * nb + 1], a, b[2], b[3]);
        }
    }
}

/// acc[16 x D] += X B where X [16 x 64] is in accumulator registers (P^T or dS^T, packed to
/// T here) and B [64][D] is a tile in shared memory: dV += P^T dO, dK += dS^T Q.
template <typename T, int D>
__device__ __forceinline__ void warp_xb(float (&acc)[D / 8][4], const float (&x)[bwd_rows / 8][4],
                                        const T* b_tile, int lane) {
#pragma unroll
    for (int kk = 0; kk < bwd_rows / 16; ++kk) {
        std::uint32_t a[4];
        pack_a<T>(a, x[2 * kk], x[2 * kk + 1]);
#pragma unroll
        for (int db = 0; db < D / 16; ++db) {
            std::uint32_t b[4];
            load_b_trans<D>(b, b_tile, kk * 16, db * 2, lane);
            mma_16816<T>(acc[2 * db], a, b[0], b[1]);
            mma_16816<T>(acc[2 * db + 1], a, b[2], b[3]);
        }
    }
}

/// Store dS^T (rows: the warp's 16 keys; columns: the tile's 64 queries) to shared memory as
/// T, the values the dK product used, for the dQ step.
template <typename T>
__device__ __forceinline__ void store_ds(T* ds, const float (&x)[bwd_rows / 8][4], int warp,
                                         int lane) {
    auto* words = reinterpret_cast<std::uint32_t*>(ds);
    const int row = warp * 16 + lane / 4, off = 2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < bwd_rows / 8; ++n) { // n-block n is chunk n of a row
        words[(swizzle<bwd_rows>(row, n) + off) / 2] = pack2<T>(x[n][0], x[n][1]);
        words[(swizzle<bwd_rows>(row + 8, n) + off) / 2] = pack2<T>(x[n][2], x[n][3]);
    }
}

/// One warp's 16 keys against the current query tile: dV += P^T dO, dK += dS^T Q, and dS^T
/// stored to shared memory for the dQ step; at most two 16x64 fp32 tiles live beside dK, dV.
template <typename T, int D, bool masked>
__device__ __forceinline__ void
bwd_warp_tile(const bwd_args<masked>& p, const bwd_smem<T, D, masked>& sm, float (&dk)[D / 8][4],
              float (&dv)[D / 8][4], const key_rows& kr, bool partial, int warp, int lane) {
    float s[bwd_rows / 8][4] = {};
    warp_abt<T, D>(s, sm.k, warp * 16, sm.q, lane); // S^T
    bwd_probs<T, D, masked>(p, s, sm, kr, partial, lane);
    warp_xb<T, D>(dv, s, sm.d_o, lane);
    float ds[bwd_rows / 8][4] = {};
    warp_abt<T, D>(ds, sm.v, warp * 16, sm.d_o, lane); // dP^T
    // dS^T = P^T (dP^T - delta) * scale, in place over dP^T.
#pragma unroll
    for (int n = 0; n < bwd_rows / 8; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            ds[n][i] = s[n][i] * (ds[n][i] - sm.delta[n * 8 + 2 * (lane % 4) + (i & 1)]) * p.scale;
    warp_xb<T, D>(dk, ds, sm.q, lane);
    store_ds<T>(sm.ds, ds, warp, lane);
}

/// A warp whose keys are all masked for this tile contributes dS^T = 0 to the dQ step.
template <typename T>
__device__ __forceinline__ void zero_ds_rows(T* ds, int warp, int lane) {
#pragma unroll
    for (int c = lane; c < 16 * bwd_rows / 8; c += 32)
        *reinterpret_cast<uint4*>(ds + (warp * 16 + c / (bwd_rows / 8)) * bwd_rows +
                                  (c % (bwd_rows / 8)) * 8) = make_uint4(0, 0, 0, 0);
}

/// dQ rows [i0 + 16 warp, +16) += dS K over the block's 64 keys, 64 columns at a time.
template <typename T, int D, bool masked>
__device__ __forceinline__ void bwd_dq(const bwd_params& p, const bwd_smem<T, D, masked>& sm,
                                       float* dq, std::int64_t i0, int warp, int lane) {
#pragma unroll
    for (int dc = 0; dc < D / 64; ++dc) {
        float acc[8][4] = {};
#pragma unroll
        for (int kk = 0; kk < bwd_keys / 16; ++kk) {
            std::uint32_t a[4];
            load_a_trans<bwd_rows>(a, sm.ds, kk * 16, warp * 2, lane); // A[q][key] = dS^T[key][q]
#pragma unroll
            for (int db = 0; db < 4; ++db) {
                std::uint32_t b[4];
                load_b_trans<D>(b, sm.k, kk * 16, dc * 8 + db * 2, lane);
                mma_16816<T>(acc[2 * db], a, b[0], b[1]);
                mma_16816<T>(acc[2 * db + 1], a, b[2], b[3]);
            }
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const std::int64_t row = i0 + warp * 16 + lane / 4 + 8 * r;
            if (row >= p.q_len)
                continue;
            float* out = dq + row * D + dc * 64 + 2 * (lane % 4);
#pragma unroll
            for (int n = 0; n < 8; ++n) {
                atomicAdd(out + n * 8, acc[n][2 * r]);
                atomicAdd(out + n * 8 + 1, acc[n][2 * r + 1]);
            }
        }
    }
}

/// Stage the query tile at row i0 of head bh: Q and dO by cp.async, LSE / delta / position
/// per row by plain loads. Rows past q_len: zero Q, dO, delta and LSE +inf (no gradient).
template <typename T, int D, bool masked>
__device__ __forceinline__ void bwd_load_q_tile(const bwd_args<masked>& p,
                                                const bwd_smem<T, D, masked>& sm, std::int64_t bh,
                                                std::int64_t i0) {
    load_tile_async<bwd_rows, D, bwd_threads>(sm.q, static_cast<const T*>(p.q) + bh * p.q_len * D,
                                              i0, p.q_len);
    load_tile_async<bwd_rows, D, bwd_threads>(
        sm.d_o, static_cast<const T*>(p.d_o) + bh * p.q_len * D, i0, p.q_len);
    cp_async_commit();
    if (threadIdx.x < bwd_rows) {
        const std::int64_t row = i0 + threadIdx.x;
        const bool valid = row < p.q_len;
        const float lse = valid ? p.lse[bh * p.q_len + row] : -INFINITY;
        sm.lse2[threadIdx.x] = lse == -INFINITY ? INFINITY : lse * log2e;
        sm.delta[threadIdx.x] = valid ? p.delta[bh * p.q_len + row] : 0.0f;
        const std::int64_t qp = position_at(p.pos.q_pos, p.pos.q_first, valid ? row : p.q_len - 1);
        sm.qpos[threadIdx.x] = qp;
        if constexpr (masked) {
            const key_range r = mask_row_range(p.mask, p.causal, qp);
            sm.key_lo[threadIdx.x] = r.lo;
            sm.key_hi[threadIdx.x] = r.hi;
        }
    }
    cp_async_wait<0>();
    __syncthreads();
}

/// The query rows [begin, end) of the call that may see the block's keys from j0.
template <bool masked>
__device__ __forceinline__ row_span bwd_query_rows(const bwd_args<masked>& p, std::int64_t j0) {
    const attention_positions& pos = p.pos;
    if constexpr (masked)
        return mask_query_rows<bwd_keys>(p.mask, p.causal, pos, p.q_len, p.k_len, j0);
    // Causal: query rows before the first key's position see none of this block's keys.
    return {p.causal ? count_at_most(pos.q_pos, pos.q_first, p.q_len,
                                     position_at(pos.k_pos, pos.k_first, j0) - 1)
                     : 0,
            p.q_len};
}

template <typename T, int D, bool masked>
__global__ void __launch_bounds__(bwd_threads, 1) attention_bwd_kernel(bwd_args<masked> p) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const bwd_smem<T, D, masked> sm(smem_raw);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const std::int64_t kv_row = blockIdx.y; // b * kv_heads + kv head
    const std::int64_t b = kv_row / p.kv_heads, group = p.heads / p.kv_heads;
    const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * bwd_keys;
    const row_span rows = bwd_query_rows<masked>(p, j0);
    if (rows.begin >= rows.end)
        return; // no query row sees these keys: nothing to add

    load_tile_async<bwd_keys, D, bwd_threads>(
        sm.k, static_cast<const T*>(p.k) + kv_row * p.k_len * D, j0, p.k_len);
    load_tile_async<bwd_keys, D, bwd_threads>(
        sm.v, static_cast<const T*>(p.v) + kv_row * p.k_len * D, j0, p.k_len);
    cp_async_commit(); // waited for with the first query tile
    const std::int64_t kw0 = j0 + warp * 16;
    const key_rows kr = make_key_rows(p, kw0, lane);
    float dk[D / 8][4] = {}, dv[D / 8][4] = {};

    for (std::int64_t g = 0; g < group; ++g) {
        const std::int64_t bh = b * p.heads + (kv_row % p.kv_heads) * group + g;
        for (std::int64_t i0 = rows.begin / bwd_rows * bwd_rows; i0 < rows.end; i0 += bwd_rows) {
            __syncthreads(); // the previous tile's shared memory is no longer read
            bwd_load_q_tile<T, D, masked>(p, sm, bh, i0);
            const bool full_rows = i0 + bwd_rows <= p.q_len;
            const std::int64_t q_first = sm.qpos[0], q_last = sm.qpos[bwd_rows - 1];
            bool skip, full;
            if constexpr (masked) {
                const block_mask c =
                    kr.live ? mask_tile(p.mask, p.causal, q_first, q_last, kr.first_pos,
                                        kr.last_pos, !full_rows || kw0 + 16 > p.k_len)
                            : block_mask::masked;
                skip = c == block_mask::masked;
                full = c == block_mask::visible;
            } else {
                skip = !kr.live || (p.causal && kr.first_pos > q_last);
                full = full_rows && kw0 + 16 <= p.k_len && (!p.causal || kr.last_pos <= q_first);
            }
            if (skip)
                zero_ds_rows(sm.ds, warp, lane);
            else
                bwd_warp_tile<T, D, masked>(p, sm, dk, dv, kr, !full, warp, lane);
            __syncthreads(); // dS^T complete
            bwd_dq<T, D, masked>(p, sm, p.dq + bh * p.q_len * D, i0, warp, lane);
        }
    }
    add_rows<D>(p.dk + kv_row * p.k_len * D, dk, kr, kw0, lane);
    add_rows<D>(p.dv + kv_row * p.k_len * D, dv, kr, kw0, lane);
}

template <typename T, int D, bool masked>
void launch_bwd(const bwd_args<masked>& p, std::int64_t batch_kv_heads, cudaStream_t stream) {
    constexpr int smem_bytes = bwd_smem<T, D, masked>::bytes;
    const auto kernel = attention_bwd_kernel<T, D, masked>;
    RINGSCALE_CUDA_CALL(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
    const dim3 grid(static_cast<unsigned>((p.k_len + bwd_keys - 1) / bwd_keys),
                    static_cast<unsigned>(batch_kv_heads));
    kernel<<<grid, bwd_threads, smem_bytes, stream>>>(p);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

/// The instantiation for head_dim D, with the mask when one beyond causal is active.
template <typename T>
void launch_bwd_of(const bwd_params& p, const mask_view& mask, std::int64_t batch_kv_heads,
                   std::int64_t head_dim, cudaStream_t stream) {
    if (mask_active(mask)) {
        const bwd_masked_params pm{p, mask};
        head_dim == 64 ? launch_bwd<T, 64, true>(pm, batch_kv_heads, stream)
                       : launch_bwd<T, 128, true>(pm, batch_kv_heads, stream);
    } else {
        head_dim == 64 ? launch_bwd<T, 64, false>(p, batch_kv_heads, stream)
                       : launch_bwd<T, 128, false>(p, batch_kv_heads, stream);
    }
}

} // namespace

void attention_bwd_cuda(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const void* d_o, const float* lse,
                        const float* delta, const attention_positions& pos, float* dq, float* dk,
                        float* dv, void* stream) {
    check_attention_launch("attention_bwd_cuda", shape, {q, k, v, d_o}, {dq, dk, dv});
    RINGSCALE_REQUIRE(shape.batch * shape.kv_heads <= 65535,
                      "attention_bwd_cuda: batch * kv_heads must be <= 65535");
    check_mask_launch("attention_bwd_cuda", shape.mask);
    if (shape.q_len == 0 || shape.k_len == 0)
        return;
    // The Hopper kernel where the attention path resolves to sm90 and it takes the shape (no
    // mask beyond causal: attention_bwd_sm90_supports).
    int device = 0;
    RINGSCALE_CUDA_CALL(cudaGetDevice(&device));
    if (resolve_attention_path(device) == attn_path::sm90 && attention_bwd_sm90_supports(shape)) {
        attention_bwd_sm90(shape, dtype, q, k, v, d_o, lse, delta, pos, dq, dk, dv, stream);
        return;
    }
    const float scale = attention_scale(shape);
    const bwd_params p{q,           k,           v,     d_o,           lse,         delta,
                       dq,          dk,          dv,    pos,           shape.heads, shape.kv_heads,
                       shape.q_len, shape.k_len, scale, scale * log2e, shape.causal};
    const std::int64_t bkv = shape.batch * shape.kv_heads;
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype::bf16)
        launch_bwd_of<__nv_bfloat16>(p, shape.mask, bkv, shape.head_dim, s);
    else
        launch_bwd_of<__half>(p, shape.mask, bkv, shape.head_dim, s);
}

} // namespace ringscale::kernels::cuda
