#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/train_layout.cuh"

namespace ringscale::kernels::cuda {

namespace {

__global__ void embedding_fwd_kernel(std::size_t tokens, std::size_t vocab, std::size_t dim,
                                     const float* table, const std::int32_t* ids, float* out) {
    RINGSCALE_GRID_STRIDE(k, tokens * dim) {
        const std::int32_t id = ids[k / dim];
        const bool ok = id >= 0 && static_cast<std::size_t>(id) < vocab;
        out[k] =
            ok ? table[static_cast<std::size_t>(id) * dim + k % dim] : __int_as_float(0x7fc00000);
    }
}

__global__ void embedding_bwd_kernel(std::size_t tokens, std::size_t vocab, std::size_t dim,
                                     const std::int32_t* ids, const float* dout, float* dtable) {
    RINGSCALE_GRID_STRIDE(k, tokens * dim) {
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
    RINGSCALE_GRID_STRIDE(k, n) {
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

} // namespace

void embedding_fwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t dim, const float* table,
                        const std::int32_t* ids, float* out, void* stream) {
    launch_elementwise(embedding_fwd_kernel, tokens * dim, stream, tokens, vocab, dim, table, ids,
                       out);
}

void embedding_bwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t dim,
                        const std::int32_t* ids, const float* dout, float* dtable, void* stream) {
    launch_elementwise(embedding_bwd_kernel, tokens * dim, stream, tokens, vocab, dim, ids, dout,
                       dtable);
}

void copy_bhsd_cuda(bool to, std::int64_t batch, std::int64_t rows, std::int64_t heads,
                    std::int64_t d, const float* src, std::int64_t cols, std::int64_t col0,
                    float* dst, void* stream) {
    launch_elementwise(bhsd_kernel, static_cast<std::size_t>(batch * rows * heads * d), stream, to,
                       batch, rows, heads, d, src, cols, col0, dst);
}

} // namespace ringscale::kernels::cuda
