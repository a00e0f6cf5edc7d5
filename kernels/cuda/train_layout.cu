#include "kernels/cuda/train_layout.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

constexpr int threads_per_block = 256;

int grid_for(std::size_t n) {
    const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
    return static_cast<int>(blocks < 65535 ? blocks : 65535);
}

// Grid-stride loop over k < n.
#define RINGSCALE_FOR_EACH(k, n)                                                                   \
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < (n); \
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x)

__global__ void embedding_fwd_kernel(std::size_t tokens, std::size_t vocab, std::size_t dim,
                                     const float* table, const std::int32_t* ids, float* out) {
    RINGSCALE_FOR_EACH(k, tokens * dim) {
        const std::int32_t id = ids[k / dim];
        const bool ok = id >= 0 && static_cast<std::size_t>(id) < vocab;
        out[k] =
            ok ? table[static_cast<std::size_t>(id) * dim + k % dim] : __int_as_float(0x7fc00000);
    }
}

__global__ void embedding_bwd_kernel(std::size_t tokens, std::size_t vocab, std::size_t dim,
                                     const std::int32_t* ids, const float* dout, float* dtable) {
    RINGSCALE_FOR_EACH(k, tokens * dim) {
        const std::int32_t id = ids[k / dim];
        if (id >= 0 && static_cast<std::size_t>(id) < vocab)
            atomicAdd(dtable + static_cast<std::size_t>(id) * dim + k % dim, dout[k]);
    }
}

// One thread per element of the BHSD tensor; `to` copies token-major -> BHSD, else back.
__global__ void bhsd_kernel(bool to, std::int64_t batch, std::int64_t rows, std::int64_t heads,
                            std::int64_t d, const float* src, std::int64_t cols, std::int64_t col0,
                            float* dst) {
    const auto n = static_cast<std::size_t>(batch * heads * rows * d);
    RINGSCALE_FOR_EACH(k, n) {
        const auto i = static_cast<std::int64_t>(k);
        const std::int64_t j = i % d, r = (i / d) % rows, h = (i / (d * rows)) % heads;
        const std::int64_t b = i / (d * rows * heads);
        const std::int64_t tok = (b * rows + r) * cols + col0 + h * d + j;
        if (to)
            dst[i] = src[tok];
        else
            dst[tok] = src[i];
    }
}

#undef RINGSCALE_FOR_EACH

} // namespace

void embedding_fwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t dim, const float* table,
                        const std::int32_t* ids, float* out, void* stream) {
    if (tokens * dim == 0)
        return;
    embedding_fwd_kernel<<<grid_for(tokens * dim), threads_per_block, 0,
                           static_cast<cudaStream_t>(stream)>>>(tokens, vocab, dim, table, ids,
                                                                out);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void embedding_bwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t dim,
                        const std::int32_t* ids, const float* dout, float* dtable, void* stream) {
    if (tokens * dim == 0)
        return;
    embedding_bwd_kernel<<<grid_for(tokens * dim), threads_per_block, 0,
                           static_cast<cudaStream_t>(stream)>>>(tokens, vocab, dim, ids, dout,
                                                                dtable);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void to_bhsd_cuda(std::int64_t batch, std::int64_t rows, std::int64_t heads, std::int64_t d,
                  const float* src, std::int64_t cols, std::int64_t col0, float* dst,
                  void* stream) {
    const auto n = static_cast<std::size_t>(batch * rows * heads * d);
    if (n == 0)
        return;
    bhsd_kernel<<<grid_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
        true, batch, rows, heads, d, src, cols, col0, dst);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void from_bhsd_cuda(std::int64_t batch, std::int64_t rows, std::int64_t heads, std::int64_t d,
                    const float* src, std::int64_t cols, std::int64_t col0, float* dst,
                    void* stream) {
    const auto n = static_cast<std::size_t>(batch * rows * heads * d);
    if (n == 0)
        return;
    bhsd_kernel<<<grid_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
        false, batch, rows, heads, d, src, cols, col0, dst);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
