#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <cuda_runtime.h>
#include <string>

namespace ringscale::kernels::cuda {

namespace {

constexpr int threads_per_block = 256; // a multiple of the warp size
constexpr int max_blocks = 65535;

// Sum of `value` over the block, returned to every thread. Uses 32 floats of shared memory.
__device__ float block_sum(float value) {
    __shared__ float warp_sums[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset /= 2)
        value += __shfl_down_sync(0xffffffffu, value, offset);
    __syncthreads(); // warp_sums may still be read from the previous call
    if (lane == 0)
        warp_sums[warp] = value;
    __syncthreads();
    const unsigned warps = blockDim.x / 32;
    float total = 0.0f;
    for (unsigned w = 0; w < warps; ++w)
        total += warp_sums[w];
    return total;
}

// One block per row: inv = 1/sqrt(mean x² + eps), y = x · inv · γ.
__global__ void rmsnorm_fwd_kernel(std::size_t rows, std::size_t dim, float eps, const float* x,
                                   const float* gamma, float* y, float* inv_rms) {
    for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * dim;
        float sum_sq = 0.0f;
        for (std::size_t j = threadIdx.x; j < dim; j += blockDim.x)
            sum_sq += xr[j] * xr[j];
        sum_sq = block_sum(sum_sq);
        const float inv = 1.0f / sqrtf(sum_sq / static_cast<float>(dim) + eps);
        if (threadIdx.x == 0)
            inv_rms[r] = inv;
        float* yr = y + r * dim;
        for (std::size_t j = threadIdx.x; j < dim; j += blockDim.x)
            yr[j] = xr[j] * inv * gamma[j];
    }
}

// dγ[j] += Σ_r dy · x · inv, one thread per column. Runs before the dx kernel because dx
// may overwrite dy.
__global__ void rmsnorm_dgamma_kernel(std::size_t rows, std::size_t dim, const float* x,
                                      const float* inv_rms, const float* dy, float* dgamma) {
    RINGSCALE_GRID_STRIDE(j, dim) {
        float sum = 0.0f;
        for (std::size_t r = 0; r < rows; ++r)
            sum += dy[r * dim + j] * x[r * dim + j] * inv_rms[r];
        dgamma[j] += sum;
    }
}

// One block per row: with g = γ·dy, dx = inv·g − x · inv³ · (g·x) / dim.
__global__ void rmsnorm_dx_kernel(std::size_t rows, std::size_t dim, const float* x,
                                  const float* gamma, const float* inv_rms, const float* dy,
                                  float* dx) {
    for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * dim;
        const float* dyr = dy + r * dim;
        float dot = 0.0f;
        for (std::size_t j = threadIdx.x; j < dim; j += blockDim.x)
            dot += gamma[j] * dyr[j] * xr[j];
        dot = block_sum(dot); // also orders every read of dy before any write of dx
        const float inv = inv_rms[r];
        const float coeff = inv * inv * inv * dot / static_cast<float>(dim);
        float* dxr = dx + r * dim;
        for (std::size_t j = threadIdx.x; j < dim; j += blockDim.x)
            dxr[j] = inv * gamma[j] * dyr[j] - coeff * xr[j];
    }
}

void check_shape(const char* name, std::size_t rows, std::size_t dim, float eps) {
    RINGSCALE_REQUIRE(rows > 0 && dim > 0, std::string(name) + ": rows and dim must be > 0");
    RINGSCALE_REQUIRE(std::isfinite(eps) && eps >= 0.0f,
                      std::string(name) + ": eps must be finite and >= 0");
}

int row_blocks(std::size_t rows) {
    return static_cast<int>(rows < max_blocks ? rows : max_blocks);
}

} // namespace

void rmsnorm_fwd_cuda(std::size_t rows, std::size_t dim, float eps, const float* x,
                      const float* gamma, float* y, float* inv_rms, void* stream) {
    check_shape("rmsnorm_fwd_cuda", rows, dim, eps);
    rmsnorm_fwd_kernel<<<row_blocks(rows), threads_per_block, 0,
                         static_cast<cudaStream_t>(stream)>>>(rows, dim, eps, x, gamma, y, inv_rms);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

void rmsnorm_bwd_cuda(std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                      const float* inv_rms, const float* dy, float* dx, float* dgamma,
                      void* stream) {
    check_shape("rmsnorm_bwd_cuda", rows, dim, 0.0f);
    const auto s = static_cast<cudaStream_t>(stream);
    launch_elementwise(rmsnorm_dgamma_kernel, dim, s, rows, dim, x, inv_rms, dy, dgamma);
    rmsnorm_dx_kernel<<<row_blocks(rows), threads_per_block, 0, s>>>(rows, dim, x, gamma, inv_rms,
                                                                     dy, dx);
    RINGSCALE_CUDA_CALL(cudaGetLastError());
}

} // namespace ringscale::kernels::cuda
