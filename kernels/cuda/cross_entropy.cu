#include "kernels/cuda/cross_entropy.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <cuda_runtime.h>
#include <string>

namespace ringscale::kernels::cuda {

namespace {

constexpr int threads_per_block = 256; // a power of two and a multiple of the warp size
constexpr int max_blocks = 65535;

struct max_op {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
    __device__ float operator()(float a, float b) const { return a + b; }
};

// `op` over the block, returned to every thread. Uses 32 floats of shared memory.
template <typename Op>
__device__ float block_reduce(float value, Op op) {
    __shared__ float warp_values[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset /= 2)
        value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
    __syncthreads(); // warp_values may still be read from the previous call
    if (lane == 0)
        warp_values[warp] = value;
    __syncthreads();
    float total = warp_values[0];
    for (unsigned w = 1; w < blockDim.x / 32; ++w)
        total = op(total, warp_values[w]);
    return total;
}

// One block per row (grid-stride over rows): max, Σ exp(l − max), then the row's loss and,
// when dlogits is not null, grad = scale · softmax − scale · onehot(target).
__global__ void cross_entropy_kernel(std::size_t tokens, std::size_t vocab, float inv_total,
                                     float grad_scale, const float* logits,
                                     const std::int32_t* targets, float* row_loss, float* dlogits) {
    for (std::size_t r = blockIdx.x; r < tokens; r += gridDim.x) {
        const float* row = logits + r * vocab;
        const std::int32_t target = targets[r];
        const bool valid = target >= 0 && static_cast<std::size_t>(target) < vocab;
        // Read before the first barrier below: dlogits may alias logits and is written after.
        const float target_logit = valid ? row[target] : NAN;
        float max = -INFINITY;
        for (std::size_t j = threadIdx.x; j < vocab; j += blockDim.x)
            max = fmaxf(max, row[j]);
        max = block_reduce(max, max_op{});
        float sum = 0.0f;
        for (std::size_t j = threadIdx.x; j < vocab; j += blockDim.x)
            sum += expf(row[j] - max);
        sum = block_reduce(sum, sum_op{}); // every read of the row's sum happens before writes
        const float lse = max + logf(sum);
        if (row_loss && threadIdx.x == 0)
            row_loss[r] = (lse - target_logit) * inv_total;
        if (!dlogits)
            continue;
        float* grad = dlogits + r * vocab;
        for (std::size_t j = threadIdx.x; j < vocab; j += blockDim.x) {
            float g = grad_scale * expf(row[j] - lse); // each thread reads, then writes, its own j
            if (j == static_cast<std::size_t>(target))
                g -= grad_scale;
            grad[j] = valid ? g : NAN;
        }
    }
}

// *total = Σ values[0, n) in double, one block, in a fixed order (deterministic).
__global__ void sum_rows_kernel(std::size_t n, const float* values, double* total) {
    __shared__ double partial[threads_per_block];
    double acc = 0.0;
    for (std::size_t i = threadIdx.x; i < n; i += blockDim.x)
        acc += values[i];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *total = partial[0];
}

void check_shape(const char* name, std::size_t tokens, std::size_t vocab,
                 std::size_t total_tokens) {
    RINGSCALE_REQUIRE(tokens > 0 && vocab > 0,
                      std::string(name) + ": tokens and vocab must be > 0");
    RINGSCALE_REQUIRE(total_tokens >= tokens,
                      std::string(name) + ": total_tokens (" + std::to_string(total_tokens) +
                          ") must be >= this shard's tokens (" + std::to_string(tokens) + ")");
}

// Launch the row kernel and, when `loss` is not null, the row sum after it on the same stream.
void launch(std::size_t tokens, std::size_t vocab, std::size_t total_tokens, float dloss,
            const float* logits, const std::int32_t* targets, float* row_loss, double* loss,
            float* dlogits, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    const int blocks = static_cast<int>(tokens < max_blocks ? tokens : max_blocks);
    const double total = static_cast<double>(total_tokens);
    cross_entropy_kernel<<<blocks, threads_per_block, 0, s>>>(
        tokens, vocab, static_cast<float>(1.0 / total), static_cast<float>(dloss / total), logits,
        targets, row_loss, dlogits);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
    if (loss) {
        sum_rows_kernel<<<1, threads_per_block, 0, s>>>(tokens, row_loss, loss);
        RINGSCALE_CUDA_CALL(cudaGetLastError());
    }
}

} // namespace

void cross_entropy_fwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                            const float* logits, const std::int32_t* targets, float* row_loss,
                            double* loss, void* stream) {
    check_shape("cross_entropy_fwd_cuda", tokens, vocab, total_tokens);
    RINGSCALE_REQUIRE(row_loss != nullptr, "cross_entropy_fwd_cuda: row_loss must not be null");
    launch(tokens, vocab, total_tokens, 1.0f, logits, targets, row_loss, loss, nullptr, stream);
}

void cross_entropy_bwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                            const float* logits, const std::int32_t* targets, float* dlogits,
                            float dloss, void* stream) {
    check_shape("cross_entropy_bwd_cuda", tokens, vocab, total_tokens);
    launch(tokens, vocab, total_tokens, dloss, logits, targets, nullptr, nullptr, dlogits, stream);
}

void cross_entropy_fwd_bwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                                const float* logits, const std::int32_t* targets, float* row_loss,
                                double* loss, float* dlogits, void* stream) {
    check_shape("cross_entropy_fwd_bwd_cuda", tokens, vocab, total_tokens);
    RINGSCALE_REQUIRE(row_loss != nullptr, "cross_entropy_fwd_bwd_cuda: row_loss must not be null");
    launch(tokens, vocab, total_tokens, 1.0f, logits, targets, row_loss, loss, dlogits, stream);
}

} // namespace ringscale::kernels::cuda
