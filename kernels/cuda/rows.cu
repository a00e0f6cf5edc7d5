#include "kernels/cuda/rows.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

constexpr int threads_per_block = 256;

// One thread per 4-byte word of the moved rows; `take` reads the indexed side.
__global__ void move_rows_kernel(std::size_t words_per_row, std::int64_t outer,
                                 std::int64_t other_rows, const std::int64_t* index,
                                 std::int64_t count, bool take, const std::uint32_t* src,
                                 std::uint32_t* dst) {
    const std::size_t total = static_cast<std::size_t>(outer * count) * words_per_row;
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < total;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t w = k % words_per_row;
        const std::size_t row = k / words_per_row; // o * count + t
        const std::int64_t o = static_cast<std::int64_t>(row) / count;
        const std::int64_t t = static_cast<std::int64_t>(row) % count;
        const std::size_t indexed = static_cast<std::size_t>(o * other_rows + index[t]);
        const std::size_t packed = row;
        if (take)
            dst[packed * words_per_row + w] = src[indexed * words_per_row + w];
        else
            dst[indexed * words_per_row + w] = src[packed * words_per_row + w];
    }
}

__global__ void add_kernel(std::size_t n, const float* a, const float* b, float* out) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        out[k] = a[k] + b[k];
}

int grid_for(std::size_t n) {
    const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
    return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

void move_rows(std::size_t row_bytes, std::int64_t outer, std::int64_t other_rows,
               const std::int64_t* index, std::int64_t count, bool take, const void* src, void* dst,
               void* stream) {
    if (outer <= 0 || count <= 0 || row_bytes == 0)
        return;
    const std::size_t words = row_bytes / 4;
    const std::size_t total = static_cast<std::size_t>(outer * count) * words;
    move_rows_kernel<<<grid_for(total), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
        words, outer, other_rows, index, count, take, static_cast<const std::uint32_t*>(src),
        static_cast<std::uint32_t*>(dst));
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace

void take_rows_cuda(std::size_t row_bytes, std::int64_t outer, std::int64_t other_rows,
                    const std::int64_t* index, std::int64_t count, const void* src, void* dst,
                    void* stream) {
    move_rows(row_bytes, outer, other_rows, index, count, true, src, dst, stream);
}

void put_rows_cuda(std::size_t row_bytes, std::int64_t outer, std::int64_t other_rows,
                   const std::int64_t* index, std::int64_t count, const void* src, void* dst,
                   void* stream) {
    move_rows(row_bytes, outer, other_rows, index, count, false, src, dst, stream);
}

void add_cuda(std::size_t n, const float* a, const float* b, float* out, void* stream) {
    if (n == 0)
        return;
    add_kernel<<<grid_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(n, a, b,
                                                                                         out);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
