// The CPU backend's training-step layers (kernels/kernels.inc): each is the CPU kernel's call,
// unchanged, so a model run through the executor computes bit for bit what the kernels
// compute when called directly. GEMMs are fp32 (OpenBLAS); TF32 is refused.
#include "kernels/cpu/adamw.hpp"
#include "kernels/cpu/backend.hpp"
#include "kernels/cpu/cross_entropy.hpp"
#include "kernels/cpu/embedding.hpp"
#include "kernels/cpu/gelu.hpp"
#include "kernels/cpu/layout_bhsd.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/rmsnorm.hpp"
#include "kernels/cpu/swiglu.hpp"
#include "src/base/error.hpp"

#include <string>

namespace ringscale::kernels::cpu {

void embedding_fwd(executor&, std::size_t t, std::size_t v, std::size_t d, const float* table,
                   const std::int32_t* ids, float* out) {
    embedding_fwd(t, v, d, table, ids, out);
}

void embedding_bwd(executor&, std::size_t t, std::size_t v, std::size_t d, const std::int32_t* ids,
                   const float* dout, float* dtable) {
    embedding_bwd(t, v, d, ids, dout, dtable);
}

void rmsnorm_fwd(executor&, std::size_t rows, std::size_t dim, float eps, const float* x,
                 const float* gamma, float* y, float* inv_rms) {
    rmsnorm_fwd(rows, dim, eps, x, gamma, y, inv_rms);
}

void rmsnorm_bwd(executor&, std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                 const float* inv_rms, const float* dy, float* dx, float* dgamma) {
    rmsnorm_bwd(rows, dim, x, gamma, inv_rms, dy, dx, dgamma);
}

void prepare_gemm(executor&, gemm_math math) {
    if (math == gemm_math::tf32)
        throw config_error("--tf32 on needs --device cuda (TF32 is a GPU tensor-core mode; the "
                           "CPU kernels compute in fp32)");
}

void linear_fwd(executor&, gemm_math, const linear_shape& s, const float* x, const float* w,
                const float* b, float* y) {
    linear_fwd(s, x, w, b, y);
}

namespace {

[[noreturn]] void refuse_lowp() {
    throw config_error("the CPU emulates --dtype by rounding the GEMM operands (fp32 GEMMs); "
                       "low-precision GEMMs run on --device cuda");
}

} // namespace

void linear_fwd_lowp(executor&, const lowp_gemm&, const linear_shape&, const float*, const float*,
                     const float*, float*) {
    refuse_lowp();
}

void linear_bwd_lowp(executor&, const lowp_gemm&, const linear_shape&, const float*, const float*,
                     const float*, float*, float*, float*) {
    refuse_lowp();
}

void linear_bwd(executor&, gemm_math, const linear_shape& s, const float* x, const float* w,
                const float* dy, float* dx, float* dw, float* db) {
    linear_bwd(s, x, w, dy, dx, dw, db);
}

namespace {

/// The sequence length of a heads op's batch shape, checked against the layer's tokens.
std::size_t heads_seq(const linear_shape& lin, const batch_shape& s, std::int64_t heads,
                      std::int64_t d, const std::string& who) {
    RINGSCALE_REQUIRE(s.batch > 0 && s.rows > 0 && heads > 0 && d > 0 &&
                          lin.tokens == static_cast<std::size_t>(s.batch * s.rows),
                      who + ": tokens must be batch x rows");
    return static_cast<std::size_t>(s.rows);
}

} // namespace

void linear_fwd_heads(executor&, gemm_math, const linear_shape& lin, const float* x, const float* w,
                      const float* b, const batch_shape& s, std::int64_t heads, std::int64_t d,
                      float* const* dst, float* scratch) {
    linear_fwd_heads(lin, x, w, b, heads_seq(lin, s, heads, d, "linear_fwd_heads"),
                     static_cast<std::size_t>(heads), static_cast<std::size_t>(d), dst, scratch);
}

void linear_bwd_heads(executor&, gemm_math, const linear_shape& lin, const float* x, const float* w,
                      const float* dy, const batch_shape& s, std::int64_t heads, std::int64_t d,
                      float* dx, float* dw, float* db, float* scratch) {
    linear_bwd_heads(lin, x, w, dy, heads_seq(lin, s, heads, d, "linear_bwd_heads"),
                     static_cast<std::size_t>(heads), static_cast<std::size_t>(d), dx, dw, db,
                     scratch);
}

void gelu_fwd(executor&, std::size_t n, const float* x, float* y) {
    gelu_fwd(n, x, y);
}

void gelu_bwd(executor&, std::size_t n, const float* x, const float* dy, float* dx) {
    gelu_bwd(n, x, dy, dx);
}

void swiglu_fwd(executor&, std::size_t rows, std::size_t f, const float* h1, float* g) {
    swiglu_fwd(rows, f, h1, g);
}

void swiglu_bwd(executor&, std::size_t rows, std::size_t f, const float* h1, const float* dg,
                float* dh1) {
    swiglu_bwd(rows, f, h1, dg, dh1);
}

void to_bhsd(executor&, const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
             std::int64_t cols, std::int64_t col0, float* dst) {
    copy_bhsd(true, s, heads, d, src, cols, col0, dst);
}

void from_bhsd(executor&, const batch_shape& s, std::int64_t heads, std::int64_t d,
               const float* src, std::int64_t cols, std::int64_t col0, float* dst) {
    copy_bhsd(false, s, heads, d, src, cols, col0, dst);
}

double cross_entropy_fwd(executor&, std::size_t t, std::size_t v, std::size_t total,
                         const float* logits, const std::int32_t* targets, loss_scratch&) {
    return cross_entropy_fwd(t, v, total, logits, targets);
}

void cross_entropy_bwd(executor&, std::size_t t, std::size_t v, std::size_t total,
                       const float* logits, const std::int32_t* targets, float* dlogits) {
    cross_entropy_bwd(t, v, total, logits, targets, dlogits);
}

void adamw_step(executor&, const adamw_params& hp, std::int64_t step, std::size_t n, float* param,
                const float* grad, float* m, float* v) {
    adamw_step(hp, step, n, param, grad, m, v);
}

std::string train_precision(executor&, gemm_math) {
    return "fp32 (CPU kernels)";
}

} // namespace ringscale::kernels::cpu
