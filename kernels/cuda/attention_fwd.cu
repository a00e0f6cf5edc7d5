#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/cuda/attention_mask.cuh"
#include "kernels/cuda/attention_sm90.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>
#include <type_traits>

namespace ringscale::kernels::cuda {

namespace {

using namespace attn;

// A block owns 128 query rows of one (batch, head), 16 per warp, and walks the K/V block in
// tiles of 64 keys, double-buffered with cp.async. Q stays in registers as A fragments; S
// and P stay in registers (P re-packed as the A operand of P V). Under a mask beyond causal
// (`masked`; kernels/mask_tiles.hpp) a block loads only the key tiles its rows may see, and
// each warp skips, takes whole or masks per element each tile as mask_tile says.
constexpr int fwd_warps = 8;
constexpr int fwd_threads = fwd_warps * 32;
constexpr int fwd_rows = fwd_warps * 16;
constexpr int fwd_keys = 64;

struct fwd_params {
    const void* q;
    const void* k;
    const void* v;
    float* o;
    float* lse;
    attention_positions pos;
    std::int64_t heads, kv_heads, q_len, k_len;
    float scale_log2; // softmax scale * log2(e): the softmax runs on exp2
    bool causal;
};

// The masked instantiation's parameters: the mask rides beside, so the unmasked kernel's
// parameters (and its register allocation) stay as they were.
struct fwd_masked_params : fwd_params {
    mask_view mask; // device arrays
};

template <bool masked>
using fwd_args = std::conditional_t<masked, fwd_masked_params, fwd_params>;

/// Running softmax state of one thread: rows g and g + 8 of its warp's 16 rows.
template <int D>
struct fwd_state {
    float acc[D / 8][4]; // unnormalised O, C fragments of D/8 n-blocks
    float row_max[2];    // log2 units; -inf until a key was visible
    float row_sum[2];    // this thread's partial sums (its 16 columns of each tile)
};

/// Mask the raw scores of a partial warp tile: -inf where the key is beyond k_len or, under
/// the causal mask, not visible to the row.
__device__ __forceinline__ void mask_scores(const fwd_params& p, float (&s)[fwd_keys / 8][4],
                                            std::int64_t j0, const std::int64_t (&row_pos)[2],
                                            int lane) {
#pragma unroll
    for (int n = 0; n < fwd_keys / 8; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const std::int64_t j = j0 + n * 8 + 2 * (lane % 4) + c;
            const bool valid = j < p.k_len;
            const std::int64_t kp = valid ? position_at(p.pos.k_pos, p.pos.k_first, j) : 0;
            if (!valid || (p.causal && kp > row_pos[0]))
                s[n][c] = -INFINITY;
            if (!valid || (p.causal && kp > row_pos[1]))
                s[n][2 + c] = -INFINITY;
        }
}

/// Online-softmax step on raw scores s: new running max (log2 units), S -> P in place with
/// one FFMA + exp2 per entry, rescale the partial sums and O.
template <int D>
__device__ __forceinline__ void online_softmax(float (&s)[fwd_keys / 8][4], fwd_state<D>& st,
                                               float scale_log2) {
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < fwd_keys / 8; ++n) {
        tile_max[0] = fmaxf(tile_max[0], fmaxf(s[n][0], s[n][1]));
        tile_max[1] = fmaxf(tile_max[1], fmaxf(s[n][2], s[n][3]));
    }
    float alpha[2], base[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        // The four threads of a quad share a row.
        tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
        tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
        const float m_new = fmaxf(st.row_max[r], tile_max[r] * scale_log2); // scale > 0
        // A row with nothing visible yet keeps max -inf; subtract 0 so exp2 gives 0, not NaN.
        base[r] = m_new == -INFINITY ? 0.0f : m_new;
        alpha[r] = exp2f(st.row_max[r] - base[r]); // 0 when nothing was seen before
        st.row_max[r] = m_new;
    }
#pragma unroll
    for (int n = 0; n < fwd_keys / 8; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            s[n][i] = exp2f(fmaf(s[n][i], scale_log2, -base[i / 2])); // masked: exp2(-inf) = 0
            sum[i / 2] += s[n][i];
        }
#pragma unroll
    for (int r = 0; r < 2; ++r)
        st.row_sum[r] = st.row_sum[r] * alpha[r] + sum[r];
#pragma unroll
    for (int d = 0; d < D / 8; ++d)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            st.acc[d][i] *= alpha[i / 2];
}

/// One warp's 16 query rows against one 64-key tile: S = Q K^T, online softmax, O += P V.
template <typename T, int D, bool masked>
__device__ __forceinline__ void fwd_warp_tile(const fwd_args<masked>& p, const T* sk, const T* sv,
                                              const std::uint32_t (&qf)[D / 16][4],
                                              fwd_state<D>& st, std::int64_t j0, bool partial,
                                              const std::int64_t (&row_pos)[2], int lane) {
    float s[fwd_keys / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
        for (int nb = 0; nb < fwd_keys / 16; ++nb) {
            std::uint32_t b[4];
            load_b_rows<D>(b, sk, nb * 16, kk * 2, lane);
            mma_16816<T>(s[2 * nb], qf[kk], b[0], b[1]);
            mma_16816<T>(s[2 * nb + 1], qf[kk], b[2], b[3]);
        }
    if (partial) {
        if constexpr (masked)
            mask_tile_scores(p.mask, p.causal, p.pos, p.k_len, s, j0, row_pos, lane);
        else
            mask_scores(p, s, j0, row_pos, lane);
    }
    online_softmax<D>(s, st, p.scale_log2);
#pragma unroll
    for (int kk = 0; kk < fwd_keys / 16; ++kk) {
        std::uint32_t a[4];
        pack_a<T>(a, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
        for (int db = 0; db < D / 16; ++db) {
            std::uint32_t b[4];
            load_b_trans<D>(b, sv, kk * 16, db * 2, lane);
            mma_16816<T>(st.acc[2 * db], a, b[0], b[1]);
            mma_16816<T>(st.acc[2 * db + 1], a, b[2], b[3]);
        }
    }
}

/// Normalise this block's result and merge it into the running (O, LSE) in global memory.
/// Rows that saw no key of this block are left untouched.
template <int D>
__device__ __forceinline__ void fwd_merge_out(const fwd_params& p, fwd_state<D>& st,
                                              std::int64_t bh, std::int64_t w0, int lane) {
    merge_rows_out<D>(p.o + bh * p.q_len * D, p.lse + bh * p.q_len, p.q_len, st.row_max, st.row_sum,
                      w0, lane, [&](int n, int i) { return st.acc[n][i]; });
}

// D=128 needs ~220 registers (one block per SM); D=64 is capped at 128 so two blocks share
// an SM (ptxas: 16 bytes of spill, CUDA 13). The masked D=64 kernel runs one block per SM:
// capped at 128 its mask arithmetic spilled ~320 bytes; uncapped it takes ~190 registers.
template <typename T, int D, bool masked>
__global__ void __launch_bounds__(fwd_threads, D == 64 && !masked ? 2 : 1)
    attention_fwd_kernel(fwd_args<masked> p) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* sq = reinterpret_cast<T*>(smem);
    T* sk = sq + fwd_rows * D; // two buffers of fwd_keys x D
    T* sv = sk + 2 * fwd_keys * D;

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const std::int64_t bh = blockIdx.y;
    const std::int64_t kvh = bh / p.heads * p.kv_heads + bh % p.heads / (p.heads / p.kv_heads);
    // Last query tiles first: under a causal mask they see the most keys.
    const std::int64_t i0 = static_cast<std::int64_t>(gridDim.x - 1 - blockIdx.x) * fwd_rows;
    const std::int64_t i_last = min(i0 + fwd_rows, p.q_len) - 1;
    const attention_positions& pos = p.pos;
    int t_first = 0, tiles = 0; // key tiles [t_first, tiles)
    if constexpr (masked) {
        const row_span keys = mask_key_rows(p.mask, p.causal, pos, p.k_len, i0, i_last);
        if (keys.begin >= keys.end)
            return; // no row of this block sees a key of this K/V block: O, LSE unchanged
        t_first = static_cast<int>(keys.begin / fwd_keys);
        tiles = static_cast<int>((keys.end + fwd_keys - 1) / fwd_keys);
    } else {
        const std::int64_t k_end = p.causal
                                       ? count_at_most(pos.k_pos, pos.k_first, p.k_len,
                                                       position_at(pos.q_pos, pos.q_first, i_last))
                                       : p.k_len;
        tiles = static_cast<int>((k_end + fwd_keys - 1) / fwd_keys);
        if (tiles == 0)
            return; // no row of this block sees a key of this K/V block: O, LSE unchanged
    }

    const T* k = static_cast<const T*>(p.k) + kvh * p.k_len * D;
    const T* v = static_cast<const T*>(p.v) + kvh * p.k_len * D;
    load_tile_async<fwd_rows, D, fwd_threads>(sq, static_cast<const T*>(p.q) + bh * p.q_len * D, i0,
                                              p.q_len);
    const std::int64_t k_row0 = static_cast<std::int64_t>(t_first) * fwd_keys;
    load_tile_async<fwd_keys, D, fwd_threads>(sk, k, k_row0, p.k_len);
    load_tile_async<fwd_keys, D, fwd_threads>(sv, v, k_row0, p.k_len);
    cp_async_commit();

    const std::int64_t w0 = i0 + warp * 16; // this warp's first query row
    const bool warp_live = w0 < p.q_len;
    const std::int64_t w_first = warp_live ? position_at(pos.q_pos, pos.q_first, w0) : 0;
    const std::int64_t w_last =
        warp_live ? position_at(pos.q_pos, pos.q_first, min(w0 + 15, p.q_len - 1)) : 0;
    std::int64_t row_pos[2]; // rows past q_len are computed but never written
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const std::int64_t row = w0 + lane / 4 + 8 * r;
        row_pos[r] = row < p.q_len ? position_at(pos.q_pos, pos.q_first, row) : w_last;
    }
    fwd_state<D> st;
#pragma unroll
    for (int d = 0; d < D / 8; ++d)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            st.acc[d][i] = 0.0f;
    st.row_max[0] = st.row_max[1] = -INFINITY;
    st.row_sum[0] = st.row_sum[1] = 0.0f;
    std::uint32_t qf[D / 16][4];

    for (int t = t_first; t < tiles; ++t) {
        const int buf = (t - t_first) & 1;
        if (t + 1 < tiles) { // prefetch the next tile into the other buffer
            const std::int64_t next = static_cast<std::int64_t>(t + 1) * fwd_keys;
            load_tile_async<fwd_keys, D, fwd_threads>(sk + (buf ^ 1) * fwd_keys * D, k, next,
                                                      p.k_len);
            load_tile_async<fwd_keys, D, fwd_threads>(sv + (buf ^ 1) * fwd_keys * D, v, next,
                                                      p.k_len);
            cp_async_commit();
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        if (t == t_first)
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk)
                load_a<D>(qf[kk], sq, warp * 16, kk * 2, lane);
        // Warp-level mask of this tile (warp-uniform): skip, full, or masked per element.
        const std::int64_t j0 = static_cast<std::int64_t>(t) * fwd_keys;
        bool skip, full;
        if constexpr (masked) {
            const block_mask c = warp_live ? mask_key_tile<fwd_keys>(p.mask, p.causal, pos, p.k_len,
                                                                     w_first, w_last, j0)
                                           : block_mask::masked;
            skip = c == block_mask::masked;
            full = c == block_mask::visible;
        } else {
            skip = !warp_live || (p.causal && position_at(pos.k_pos, pos.k_first, j0) > w_last);
            full = j0 + fwd_keys <= p.k_len &&
                   (!p.causal || position_at(pos.k_pos, pos.k_first, j0 + fwd_keys - 1) <= w_first);
        }
        if (!skip)
            fwd_warp_tile<T, D, masked>(p, sk + buf * fwd_keys * D, sv + buf * fwd_keys * D, qf, st,
                                        j0, !full, row_pos, lane);
        __syncthreads(); // every warp is done with this buffer before it is refilled
    }
    fwd_merge_out<D>(p, st, bh, w0, lane);
}

template <typename T, int D, bool masked>
void launch_fwd(const fwd_args<masked>& p, std::int64_t batch_heads, cudaStream_t stream) {
    constexpr int smem_bytes = (fwd_rows + 4 * fwd_keys) * D * static_cast<int>(sizeof(T));
    const auto kernel = attention_fwd_kernel<T, D, masked>;
    RINGSCALE_CUDA_CALL(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
    const dim3 grid(static_cast<unsigned>((p.q_len + fwd_rows - 1) / fwd_rows),
                    static_cast<unsigned>(batch_heads));
    kernel<<<grid, fwd_threads, smem_bytes, stream>>>(p);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

/// The instantiation for head_dim D, with the mask when one beyond causal is active.
template <typename T>
void launch_fwd_of(const fwd_params& p, const mask_view& mask, std::int64_t batch_heads,
                   std::int64_t head_dim, cudaStream_t stream) {
    if (mask_active(mask)) {
        const fwd_masked_params pm{p, mask};
        head_dim == 64 ? launch_fwd<T, 64, true>(pm, batch_heads, stream)
                       : launch_fwd<T, 128, true>(pm, batch_heads, stream);
    } else {
        head_dim == 64 ? launch_fwd<T, 64, false>(p, batch_heads, stream)
                       : launch_fwd<T, 128, false>(p, batch_heads, stream);
    }
}

__global__ void fill_kernel(std::size_t n, float value, float* dst) {
    RINGSCALE_GRID_STRIDE(k, n) {
        dst[k] = value;
    }
}

} // namespace

void attention_fwd_init_cuda(const attention_shape& shape, float* o, float* lse, void* stream) {
    check_attention_shape(shape);
    const auto s = static_cast<cudaStream_t>(stream);
    const auto o_elems = static_cast<std::size_t>(attention_q_elems(shape));
    const auto rows = static_cast<std::size_t>(shape.batch * shape.heads * shape.q_len);
    if (o_elems > 0)
        RINGSCALE_CUDA_CALL(cudaMemsetAsync(o, 0, o_elems * sizeof(float), s));
    launch_elementwise(fill_kernel, rows, s, rows, -INFINITY, lse);
}

void attention_fwd_cuda(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const attention_positions& pos, float* o,
                        float* lse, void* stream) {
    check_attention_launch("attention_fwd_cuda", shape, {q, k, v}, {o});
    check_mask_launch("attention_fwd_cuda", shape.mask);
    if (shape.q_len == 0 || shape.k_len == 0)
        return;
    int device = 0;
    RINGSCALE_CUDA_CALL(cudaGetDevice(&device));
    // The sm90 kernels take no mask (attention_fwd_sm90_supports): a mask runs sm80.
    if (resolve_attention_path(device) == attn_path::sm90 && attention_fwd_sm90_supports(shape)) {
        attention_fwd_sm90(shape, dtype, q, k, v, pos, o, lse, stream);
        return;
    }
    const fwd_params p{q,
                       k,
                       v,
                       o,
                       lse,
                       pos,
                       shape.heads,
                       shape.kv_heads,
                       shape.q_len,
                       shape.k_len,
                       attention_scale(shape) * log2e,
                       shape.causal};
    const std::int64_t bh = shape.batch * shape.heads;
    const auto s = static_cast<cudaStream_t>(stream);
    if (dtype == attn_dtype::bf16)
        launch_fwd_of<__nv_bfloat16>(p, shape.mask, bh, shape.head_dim, s);
    else
        launch_fwd_of<__half>(p, shape.mask, bh, shape.head_dim, s);
}

} // namespace ringscale::kernels::cuda
