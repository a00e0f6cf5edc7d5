// cuBLAS is column-major; our buffers are row-major. A row-major A[r, c] is, read column-major,
// Aᵀ with leading dimension c. So each row-major product C = A·B is issued as the column-major
// Cᵀ = Bᵀ·Aᵀ, with every operand's leading dimension its row-major column count.
#include "kernels/cuda/dense.cuh"
#include "kernels/cuda/elementwise.cuh"

#include <cublas_v2.h>

namespace ringscale::kernels::cuda {

namespace {

// y[t, o] = b[o] for every token: the GEMM then adds x·Wᵀ with beta = 1.
__global__ void bias_broadcast_kernel(std::size_t tokens, std::size_t out, const float* b,
                                      float* y) {
    RINGSCALE_GRID_STRIDE(i, tokens * out) {
        y[i] = b[i % out];
    }
}

// db[o] += Σ_t dy[t, o], one thread per column summing in double (adjacent threads read
// adjacent columns, so each row is read coalesced). Deterministic.
__global__ void bias_grad_kernel(std::size_t tokens, std::size_t out, const float* dy, float* db) {
    RINGSCALE_GRID_STRIDE(o, out) {
        double sum = 0.0;
        for (std::size_t t = 0; t < tokens; ++t)
            sum += dy[t * out + o];
        db[o] += static_cast<float>(sum);
    }
}

cublasHandle_t handle_of(cublas_context& ctx) {
    return static_cast<cublasHandle_t>(ctx.handle());
}

} // namespace

void linear_fwd_cuda(cublas_context& ctx, const linear_shape& s, const float* x, const float* w,
                     const float* b, float* y) {
    linear_check(s); // also bounds every dimension by INT_MAX for cuBLAS
    const int tokens = static_cast<int>(s.tokens), in = static_cast<int>(s.in);
    const int out = static_cast<int>(s.out);
    float beta = 0.0f;
    if (b) {
        launch_elementwise(bias_broadcast_kernel, s.tokens * s.out, ctx.stream(), s.tokens, s.out,
                           b, y);
        beta = 1.0f;
    }
    const float alpha = 1.0f;
    // yᵀ[out, tokens] = W[out, in]·xᵀ[in, tokens]. W is stored as column-major Wᵀ[in, out]
    // (ld in), hence OP_T; x is stored as column-major xᵀ[in, tokens] (ld in), hence OP_N.
    RINGSCALE_CUBLAS_CALL(cublasSgemm(handle_of(ctx), CUBLAS_OP_T, CUBLAS_OP_N, out, tokens, in,
                                      &alpha, w, in, x, in, &beta, y, out));
}

void linear_bwd_cuda(cublas_context& ctx, const linear_shape& s, const float* x, const float* w,
                     const float* dy, float* dx, float* dw, float* db) {
    linear_check(s);
    const int tokens = static_cast<int>(s.tokens), in = static_cast<int>(s.in);
    const int out = static_cast<int>(s.out);
    const float one = 1.0f, zero = 0.0f;
    if (dx) // dxᵀ[in, tokens] = Wᵀ[in, out]·dyᵀ[out, tokens]: both stored that way, OP_N OP_N.
        RINGSCALE_CUBLAS_CALL(cublasSgemm(handle_of(ctx), CUBLAS_OP_N, CUBLAS_OP_N, in, tokens, out,
                                          &one, w, in, dy, out, &zero, dx, in));
    // dwᵀ[in, out] += xᵀ[in, tokens]·dy[tokens, out]. x is stored as xᵀ (OP_N, ld in); dy is
    // stored as dyᵀ[out, tokens] (ld out), so it needs OP_T. beta = 1 accumulates.
    RINGSCALE_CUBLAS_CALL(cublasSgemm(handle_of(ctx), CUBLAS_OP_N, CUBLAS_OP_T, in, out, tokens,
                                      &one, x, in, dy, out, &one, dw, in));
    if (db)
        launch_elementwise(bias_grad_kernel, s.out, ctx.stream(), s.tokens, s.out, dy, db);
}

void bias_broadcast_cuda(std::size_t tokens, std::size_t out, const float* b, float* y,
                         void* stream) {
    launch_elementwise(bias_broadcast_kernel, tokens * out, stream, tokens, out, b, y);
}

void bias_grad_cuda(std::size_t tokens, std::size_t out, const float* dy, float* db, void* stream) {
    launch_elementwise(bias_grad_kernel, out, stream, tokens, out, dy, db);
}

} // namespace ringscale::kernels::cuda
