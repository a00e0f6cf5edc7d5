// The CUDA backend's training-step layers (kernels/kernels.inc): the nn kernels of this folder
// on the executor's compute stream, GEMMs through the executor's cuBLAS handle of the asked
// arithmetic (fp32, or TF32 tensor cores), or in bf16, fp16 or fp8 through its cuBLASLt
// GEMMs (kernels/cuda/lowp_linear).
#include "kernels/cuda/adamw.cuh"
#include "kernels/cuda/backend.hpp"
#include "kernels/cuda/cross_entropy.cuh"
#include "kernels/cuda/dense.cuh"
#include "kernels/cuda/executor.hpp"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/lowp_linear.hpp"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/swiglu.cuh"
#include "kernels/cuda/train_layout.cuh"
#include "src/base/error.hpp"

namespace ringscale::kernels::cuda {

void embedding_fwd(executor& exec, std::size_t t, std::size_t v, std::size_t d, const float* table,
                   const std::int32_t* ids, float* out) {
    embedding_fwd_cuda(t, v, d, table, ids, out, exec.stream());
}

void embedding_bwd(executor& exec, std::size_t t, std::size_t v, std::size_t d,
                   const std::int32_t* ids, const float* dout, float* dtable) {
    embedding_bwd_cuda(t, v, d, ids, dout, dtable, exec.stream());
}

void rmsnorm_fwd(executor& exec, std::size_t rows, std::size_t dim, float eps, const float* x,
                 const float* gamma, float* y, float* inv_rms) {
    rmsnorm_fwd_cuda(rows, dim, eps, x, gamma, y, inv_rms, exec.stream());
}

void rmsnorm_bwd(executor& exec, std::size_t rows, std::size_t dim, const float* x,
                 const float* gamma, const float* inv_rms, const float* dy, float* dx,
                 float* dgamma) {
    rmsnorm_bwd_cuda(rows, dim, x, gamma, inv_rms, dy, dx, dgamma, exec.stream());
}

void prepare_gemm(executor& exec, gemm_math math) {
    as_cuda(exec).blas(math);
}

void linear_fwd(executor& exec, gemm_math math, const linear_shape& s, const float* x,
                const float* w, const float* b, float* y) {
    linear_fwd_cuda(as_cuda(exec).blas(math), s, x, w, b, y);
}

void linear_bwd(executor& exec, gemm_math math, const linear_shape& s, const float* x,
                const float* w, const float* dy, float* dx, float* dw, float* db) {
    linear_bwd_cuda(as_cuda(exec).blas(math), s, x, w, dy, dx, dw, db);
}

void linear_fwd_lowp(executor& exec, const lowp_gemm& g, const linear_shape& s, const float* x,
                     const float* w, const float* b, float* y) {
    as_cuda(exec).lowp().forward(g, s, x, w, b, y);
}

void linear_bwd_lowp(executor& exec, const lowp_gemm& g, const linear_shape& s, const float* x,
                     const float* w, const float* dy, float* dx, float* dw, float* db) {
    as_cuda(exec).lowp().backward(g, s, x, w, dy, dx, dw, db);
}

void linear_fwd_heads(executor& exec, gemm_math math, const linear_shape& lin, const float* x,
                      const float* w, const float* b, const batch_shape& s, std::int64_t heads,
                      std::int64_t d, float* const* dst, float* scratch) {
    const auto group = heads * d;
    RINGSCALE_REQUIRE(group > 0 && lin.out % static_cast<std::size_t>(group) == 0 && scratch,
                      "linear_fwd_heads: out must be whole groups of heads x d, with scratch");
    linear_fwd_cuda(as_cuda(exec).blas(math), lin, x, w, b, scratch);
    for (std::int64_t g = 0; g < static_cast<std::int64_t>(lin.out) / group; ++g)
        copy_bhsd_cuda(true, s.batch, s.rows, heads, d, scratch, static_cast<std::int64_t>(lin.out),
                       g * group, dst[g], exec.stream());
}

void linear_bwd_heads(executor& exec, gemm_math math, const linear_shape& lin, const float* x,
                      const float* w, const float* dy, const batch_shape& s, std::int64_t heads,
                      std::int64_t d, float* dx, float* dw, float* db, float* scratch) {
    RINGSCALE_REQUIRE(lin.in == static_cast<std::size_t>(heads * d) && dx && scratch,
                      "linear_bwd_heads: in must be heads x d, with dx and scratch");
    linear_bwd_cuda(as_cuda(exec).blas(math), lin, x, w, dy, scratch, dw, db);
    copy_bhsd_cuda(true, s.batch, s.rows, heads, d, scratch, static_cast<std::int64_t>(lin.in), 0,
                   dx, exec.stream());
}

void gelu_fwd(executor& exec, std::size_t n, const float* x, float* y) {
    gelu_fwd_cuda(n, x, y, exec.stream());
}

void gelu_bwd(executor& exec, std::size_t n, const float* x, const float* dy, float* dx) {
    gelu_bwd_cuda(n, x, dy, dx, exec.stream());
}

void swiglu_fwd(executor& exec, std::size_t rows, std::size_t f, const float* h1, float* g) {
    swiglu_fwd_cuda(rows, f, h1, g, exec.stream());
}

void swiglu_bwd(executor& exec, std::size_t rows, std::size_t f, const float* h1, const float* dg,
                float* dh1) {
    swiglu_bwd_cuda(rows, f, h1, dg, dh1, exec.stream());
}

void to_bhsd(executor& exec, const batch_shape& s, std::int64_t heads, std::int64_t d,
             const float* src, std::int64_t cols, std::int64_t col0, float* dst) {
    copy_bhsd_cuda(true, s.batch, s.rows, heads, d, src, cols, col0, dst, exec.stream());
}

void from_bhsd(executor& exec, const batch_shape& s, std::int64_t heads, std::int64_t d,
               const float* src, std::int64_t cols, std::int64_t col0, float* dst) {
    copy_bhsd_cuda(false, s.batch, s.rows, heads, d, src, cols, col0, dst, exec.stream());
}

double cross_entropy_fwd(executor& exec, std::size_t t, std::size_t v, std::size_t total,
                         const float* logits, const std::int32_t* targets, loss_scratch& scratch) {
    if (scratch.total.empty())
        scratch.total.allocate(exec, 1);
    if (scratch.rows.size() < t)
        scratch.rows.allocate(exec, t);
    cross_entropy_fwd_cuda(t, v, total, logits, targets, scratch.rows.data(), scratch.total.data(),
                           exec.stream());
    return scratch.total.download(1)[0]; // waits for the stream
}

void cross_entropy_bwd(executor& exec, std::size_t t, std::size_t v, std::size_t total,
                       const float* logits, const std::int32_t* targets, float* dlogits) {
    cross_entropy_bwd_cuda(t, v, total, logits, targets, dlogits, 1.0f, exec.stream());
}

void adamw_step(executor& exec, const adamw_params& hp, std::int64_t step, std::size_t n,
                float* param, const float* grad, float* m, float* v) {
    adamw_step_cuda(hp, step, n, param, grad, m, v, exec.stream());
}

std::string train_precision(executor&, gemm_math math) {
    return math == gemm_math::tf32
               ? "fp32 storage, TF32 GEMMs (cuBLAS), attention Q/K/V/dO in bf16"
               : "fp32 (GEMMs in fp32 through cuBLAS), attention Q/K/V/dO in bf16";
}

} // namespace ringscale::kernels::cuda
