#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_bwd.cuh"
#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/attention_sm90.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

using namespace attn;

// A block owns 64 keys of one (batch, kv head), 16 per warp, keeps their dK and dV in
// registers, and walks the query tiles (64 rows) of every query head of the group. Each warp
// computes the transposed products for its keys (S^T = K Q^T, dP^T = V dO^T), so P^T and dS^T
// sit in accumulator registers and re-pack as A operands of dV += P^T dO and dK += dS^T Q.
// dQ = dS K needs all 64 keys of a query row: dS^T goes through shared memory and each warp
// then owns 16 query rows, adding its share to dQ with atomics.
constexpr int bwd_warps = 4;
constexpr int bwd_threads = bwd_warps * 32;
constexpr int bwd_keys = bwd_warps * 16;
constexpr int bwd_rows = 64;

struct bwd_params {
    const void* q;
    const void* k;
    const void* v;
    const void* d_o;
    const float* lse;
    const float* delta;
    float* dq;
    float* dk;
    float* dv;
    attention_positions pos;
    std::int64_t heads, kv_heads, q_len, k_len;
    float scale;
    float scale_log2;
    bool causal;
};

/// Shared memory of one block: K, V (its keys), Q, dO (the query tile), dS^T [keys][rows] and,
/// per query row, its LSE in log2 units (+inf where no gradient flows), delta and position.
template <typename T, int D>
struct bwd_smem {
    T* k;
    T* v;
    T* q;
    T* d_o;
    T* ds;
    float* lse2;
    float* delta;
    std::int64_t* qpos;

    static constexpr int bytes =
        ((2 * bwd_keys + 2 * bwd_rows) * D + bwd_keys * bwd_rows) * static_cast<int>(sizeof(T)) +
        bwd_rows * static_cast<int>(2 * sizeof(float) + sizeof(std::int64_t));

    __device__ explicit bwd_smem(unsigned char* raw) {
        k = reinterpret_cast<T*>(raw);
        v = k + bwd_keys * D;
        q = v + bwd_keys * D;
        d_o = q + bwd_rows * D;
        ds = d_o + bwd_rows * D;
        qpos = reinterpret_cast<std::int64_t*>(ds + bwd_keys * bwd_rows); // 8-byte aligned
        lse2 = reinterpret_cast<float*>(qpos + bwd_rows);
        delta = lse2 + bwd_rows;
    }
};

/// Per-thread facts about its two key rows (g and g + 8 of its warp's 16).
struct key_rows {
    std::int64_t first_pos, last_pos; // positions of the warp's first and last valid key
    std::int64_t pos[2];
    bool valid[2];
    bool live; // the warp has at least one key < k_len
};

/// P^T (in place over S^T): exp2(S * scale * log2e - LSE * log2e), 0 where masked.
__device__ __forceinline__ void bwd_probs(const bwd_params& p, float (&s)[bwd_rows / 8][4],
                                          const float* lse2, const std::int64_t* qpos,
                                          const key_rows& kr, bool partial, int lane) {
#pragma unroll
    for (int n = 0; n < bwd_rows / 8; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int col = n * 8 + 2 * (lane % 4) + (i & 1);
            const int r = i / 2;
            // lse2 is +inf for rows with no gradient (and rows past q_len): exp2(-inf) = 0.
            const float x = exp2f(s[n][i] * p.scale_log2 - lse2[col]);
            const bool masked = partial && (!kr.valid[r] || (p.causal && kr.pos[r] > qpos[col]));
            s[n][i] = masked ? 0.0f : x;
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
template <typename T, int D>
__device__ __forceinline__ void
bwd_warp_tile(const bwd_params& p, const bwd_smem<T, D>& sm, float (&dk)[D / 8][4],
              float (&dv)[D / 8][4], const key_rows& kr, bool partial, int warp, int lane) {
    float s[bwd_rows / 8][4] = {};
    warp_abt<T, D>(s, sm.k, warp * 16, sm.q, lane); // S^T
    bwd_probs(p, s, sm.lse2, sm.qpos, kr, partial, lane);
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
template <typename T, int D>
__device__ __forceinline__ void bwd_dq(const bwd_params& p, const bwd_smem<T, D>& sm, float* dq,
                                       std::int64_t i0, int warp, int lane) {
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
template <typename T, int D>
__device__ __forceinline__ void bwd_load_q_tile(const bwd_params& p, const bwd_smem<T, D>& sm,
                                                std::int64_t bh, std::int64_t i0) {
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
        sm.qpos[threadIdx.x] = position_at(p.pos.q_pos, p.pos.q_first, valid ? row : p.q_len - 1);
    }
    cp_async_wait<0>();
    __syncthreads();
}

__device__ __forceinline__ key_rows make_key_rows(const bwd_params& p, std::int64_t kw0, int lane) {
    key_rows kr;
    kr.live = kw0 < p.k_len;
    const std::int64_t last = min(kw0 + 15, p.k_len - 1);
    kr.first_pos = kr.live ? position_at(p.pos.k_pos, p.pos.k_first, kw0) : 0;
    kr.last_pos = kr.live ? position_at(p.pos.k_pos, p.pos.k_first, last) : 0;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const std::int64_t key = kw0 + lane / 4 + 8 * r;
        kr.valid[r] = key < p.k_len;
        kr.pos[r] = kr.valid[r] ? position_at(p.pos.k_pos, p.pos.k_first, key) : 0;
    }
    return kr;
}

/// Add the block's dK or dV rows (fp32 C fragments of its warps) into global memory.
template <int D>
__device__ __forceinline__ void add_rows(float* out, const float (&acc)[D / 8][4],
                                         const key_rows& kr, std::int64_t kw0, int lane) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (!kr.valid[r])
            continue;
        float* row = out + (kw0 + lane / 4 + 8 * r) * D + 2 * (lane % 4);
#pragma unroll
        for (int d = 0; d < D / 8; ++d) {
            float2 x = *reinterpret_cast<const float2*>(row + d * 8);
            x.x += acc[d][2 * r];
            x.y += acc[d][2 * r + 1];
            *reinterpret_cast<float2*>(row + d * 8) = x;
        }
    }
}

template <typename T, int D>
__global__ void __launch_bounds__(bwd_threads, 1) attention_bwd_kernel(bwd_params p) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const bwd_smem<T, D> sm(smem_raw);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const std::int64_t kv_row = blockIdx.y; // b * kv_heads + kv head
    const std::int64_t b = kv_row / p.kv_heads, group = p.heads / p.kv_heads;
    const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * bwd_keys;
    // Causal: query rows before the first key's position see none of this block's keys.
    const std::int64_t i_begin =
        p.causal ? count_at_most(p.pos.q_pos, p.pos.q_first, p.q_len,
                                 position_at(p.pos.k_pos, p.pos.k_first, j0) - 1)
                 : 0;
    if (i_begin >= p.q_len)
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
        for (std::int64_t i0 = i_begin / bwd_rows * bwd_rows; i0 < p.q_len; i0 += bwd_rows) {
            __syncthreads(); // the previous tile's shared memory is no longer read
            bwd_load_q_tile<T, D>(p, sm, bh, i0);
            const bool full_rows = i0 + bwd_rows <= p.q_len;
            const std::int64_t q_first = sm.qpos[0], q_last = sm.qpos[bwd_rows - 1];
            const bool skip = !kr.live || (p.causal && kr.first_pos > q_last);
            const bool full =
                full_rows && kw0 + 16 <= p.k_len && (!p.causal || kr.last_pos <= q_first);
            if (skip)
                zero_ds_rows(sm.ds, warp, lane);
            else
                bwd_warp_tile<T, D>(p, sm, dk, dv, kr, !full, warp, lane);
            __syncthreads(); // dS^T complete
            bwd_dq<T, D>(p, sm, p.dq + bh * p.q_len * D, i0, warp, lane);
        }
    }
    add_rows<D>(p.dk + kv_row * p.k_len * D, dk, kr, kw0, lane);
    add_rows<D>(p.dv + kv_row * p.k_len * D, dv, kr, kw0, lane);
}

template <typename T, int D>
void launch_bwd(const bwd_params& p, std::int64_t batch_kv_heads, cudaStream_t stream) {
    constexpr int smem_bytes = bwd_smem<T, D>::bytes;
    const auto kernel = attention_bwd_kernel<T, D>;
    RINGSCALE_CUDA_CALL(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
    const dim3 grid(static_cast<unsigned>((p.k_len + bwd_keys - 1) / bwd_keys),
                    static_cast<unsigned>(batch_kv_heads));
    kernel<<<grid, bwd_threads, smem_bytes, stream>>>(p);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

/// One warp per row: delta = sum_d O * dO.
template <typename T>
__global__ void delta_kernel(std::int64_t rows, int dim, const float* o, const T* d_o,
                             float* delta) {
    const int lane = threadIdx.x % 32;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
    for (std::int64_t r = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
         r < rows; r += warps) {
        float sum = 0.0f;
        for (int d = lane; d < dim; d += 32)
            sum += o[r * dim + d] * static_cast<float>(d_o[r * dim + d]);
        for (int offset = 16; offset > 0; offset /= 2)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        if (lane == 0)
            delta[r] = sum;
    }
}

} // namespace

void attention_bwd_delta_cuda(const attention_shape& shape, attn_dtype dtype, const float* o,
                              const void* d_o, float* delta, void* stream) {
    check_attention_shape(shape);
    const std::int64_t rows = shape.batch * shape.heads * shape.q_len;
    if (rows == 0)
        return;
    constexpr int threads = 256;
    const std::int64_t blocks = (rows + threads / 32 - 1) / (threads / 32);
    const int grid = static_cast<int>(blocks < 65535 ? blocks : 65535);
    const auto s = static_cast<cudaStream_t>(stream);
    const int dim = static_cast<int>(shape.head_dim);
    if (dtype == attn_dtype::bf16)
        delta_kernel<<<grid, threads, 0, s>>>(rows, dim, o, static_cast<const __nv_bfloat16*>(d_o),
                                              delta);
    else
        delta_kernel<<<grid, threads, 0, s>>>(rows, dim, o, static_cast<const __half*>(d_o), delta);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void attention_bwd_cuda(const attention_shape& shape, attn_dtype dtype, const void* q,
                        const void* k, const void* v, const void* d_o, const float* lse,
                        const float* delta, const attention_positions& pos, float* dq, float* dk,
                        float* dv, void* stream) {
    check_attention_launch("attention_bwd_cuda", shape, {q, k, v, d_o}, {dq, dk, dv});
    RINGSCALE_REQUIRE(shape.batch * shape.kv_heads <= 65535,
                      "attention_bwd_cuda: batch * kv_heads must be <= 65535");
    if (shape.q_len == 0 || shape.k_len == 0)
        return;
    // The Hopper kernel where the attention path resolves to sm90 and it takes the shape.
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
        shape.head_dim == 64 ? launch_bwd<__nv_bfloat16, 64>(p, bkv, s)
                             : launch_bwd<__nv_bfloat16, 128>(p, bkv, s);
    else
        shape.head_dim == 64 ? launch_bwd<__half, 64>(p, bkv, s)
                             : launch_bwd<__half, 128>(p, bkv, s);
}

} // namespace ringscale::kernels::cuda
