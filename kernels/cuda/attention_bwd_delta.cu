// delta = rowsum(dO * O) for the CUDA attention backward (attention_bwd.cuh).
#include "kernels/cuda/attention_bwd.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

namespace {

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

} // namespace ringscale::kernels::cuda
