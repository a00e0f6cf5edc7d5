#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/rows.cuh"

namespace ringscale::kernels::cuda {

namespace {

// One thread per 4-byte word of the moved rows; `take` reads the indexed side.
__global__ void move_rows_kernel(std::size_t words_per_row, std::int64_t outer,
                                 std::int64_t other_rows, const std::int64_t* index,
                                 std::int64_t count, bool take, const std::uint32_t* src,
                                 std::uint32_t* dst) {
    const std::size_t total = static_cast<std::size_t>(outer * count) * words_per_row;
    RINGSCALE_GRID_STRIDE(k, total) {
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
    RINGSCALE_GRID_STRIDE(k, n) {
        out[k] = a[k] + b[k];
    }
}

void move_rows(std::size_t row_bytes, std::int64_t outer, std::int64_t other_rows,
               const std::int64_t* index, std::int64_t count, bool take, const void* src, void* dst,
               void* stream) {
    if (outer <= 0 || count <= 0 || row_bytes == 0)
        return;
    const std::size_t words = row_bytes / 4;
    launch_elementwise(move_rows_kernel, static_cast<std::size_t>(outer * count) * words, stream,
                       words, outer, other_rows, index, count, take,
                       static_cast<const std::uint32_t*>(src), static_cast<std::uint32_t*>(dst));
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
    launch_elementwise(add_kernel, n, stream, n, a, b, out);
}

} // namespace ringscale::kernels::cuda
