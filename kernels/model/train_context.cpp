#include "kernels/model/train_context.hpp"

#include <algorithm>
#include <memory>

namespace ringscale::kernels::model {

train_context::train_context(executor& exec, bool allow_tf32)
    : m_exec(exec), m_math(allow_tf32 ? gemm_math::tf32 : gemm_math::fp32) {
    prepare_gemm(m_exec, m_math);
}

std::string train_context::storage() const {
    const train_dtype t = m_mixed.config().dtype;
    const char* gemm = t == train_dtype::bf16      ? "bf16"
                       : t == train_dtype::fp16    ? "fp16 (output gradients loss-scaled)"
                       : t == train_dtype::fp8     ? "E4M3 activations and weights, E5M2 output "
                                                     "gradients, per-tensor scales"
                       : m_math == gemm_math::tf32 ? "fp32 (multiplied in TF32)"
                                                   : "fp32";
    // The attention's inputs: the dtype's (fp8 attends in bf16); fp32 where the kernels take
    // it (the CPU), else bf16.
    const char* attn = t == train_dtype::fp16                                        ? "fp16"
                       : t != train_dtype::fp32 || m_exec.kind() != device_kind::cpu ? "bf16"
                                                                                     : "fp32";
    return std::string("master weights, gradients, AdamW moments and saved activations fp32; "
                       "gradients reduced in fp32; GEMM inputs ") +
           gemm + " with fp32 accumulation; attention Q, K, V, dO " + attn +
           ", O, LSE and their gradients fp32";
}

void train_context::gemm_fwd(int site, const linear_shape& s, const float* x, const float* w,
                             const float* b, float* y) {
    if (m_progress)
        m_progress();
    const float* xr = m_mixed.gemm_input(site, gemm_operand::x, x, s.tokens * s.in);
    const float* wr = m_mixed.gemm_input(site, gemm_operand::w, w, s.out * s.in);
    linear_fwd(m_exec, m_math, s, xr, wr, b, y);
}

void train_context::gemm_fwd_heads(int site, const linear_shape& s, const float* x, const float* w,
                                   const float* b, const batch_shape& bs, std::int64_t heads,
                                   std::int64_t d, float* const* dst, float* scratch) {
    if (m_progress)
        m_progress();
    const float* xr = m_mixed.gemm_input(site, gemm_operand::x, x, s.tokens * s.in);
    const float* wr = m_mixed.gemm_input(site, gemm_operand::w, w, s.out * s.in);
    linear_fwd_heads(m_exec, m_math, s, xr, wr, b, bs, heads, d, dst, scratch);
}

void train_context::gemm_bwd_heads(int site, const linear_shape& s, const float* x, const float* w,
                                   const float* dy, const batch_shape& bs, std::int64_t heads,
                                   std::int64_t d, float* dx, float* dw, float* db,
                                   float* scratch) {
    if (m_exec.kind() == device_kind::cpu && m_mixed.reorders()) { // rows put back, then moved
        gemm_bwd(site, s, x, w, dy, scratch, dw, db);
        to_bhsd(m_exec, bs, heads, d, scratch, heads * d, 0, dx);
        return;
    }
    if (m_progress)
        m_progress();
    const float* xr = m_mixed.gemm_input(site, gemm_operand::x, x, s.tokens * s.in);
    const float* wr = m_mixed.gemm_input(site, gemm_operand::w, w, s.out * s.in);
    const float* dyr = m_mixed.gemm_input(site, gemm_operand::dy, dy, s.tokens * s.out);
    linear_bwd_heads(m_exec, m_math, s, xr, wr, dyr, bs, heads, d, dx, dw, db, scratch);
}

void train_context::gemm_bwd(int site, const linear_shape& s, const float* x, const float* w,
                             const float* dy, float* dx, float* dw, float* db) {
    if (m_progress)
        m_progress();
    const float* xr = m_mixed.gemm_input(site, gemm_operand::x, x, s.tokens * s.in);
    const float* wr = m_mixed.gemm_input(site, gemm_operand::w, w, s.out * s.in);
    const float* dyr = m_mixed.gemm_input(site, gemm_operand::dy, dy, s.tokens * s.out);
    // The numerics floor's runs (CPU): the rows in a random order, so the weight gradient's
    // sum over tokens is really reordered; dx's rows are put back (each row's own sum keeps
    // its order).
    const std::vector<std::size_t> order = m_exec.kind() == device_kind::cpu
                                               ? m_mixed.row_order(s.tokens)
                                               : std::vector<std::size_t>{};
    if (order.empty()) {
        linear_bwd(m_exec, m_math, s, xr, wr, dyr, dx, dw, db);
        return;
    }
    m_rows_x.resize(s.tokens * s.in);
    m_rows_dy.resize(s.tokens * s.out);
    m_rows_dx.resize(s.tokens * s.in);
    for (std::size_t i = 0; i < s.tokens; ++i) {
        std::copy_n(xr + order[i] * s.in, s.in, m_rows_x.data() + i * s.in);
        std::copy_n(dyr + order[i] * s.out, s.out, m_rows_dy.data() + i * s.out);
    }
    linear_bwd(m_exec, m_math, s, m_rows_x.data(), wr, m_rows_dy.data(), m_rows_dx.data(), dw, db);
    for (std::size_t i = 0; i < s.tokens; ++i)
        std::copy_n(m_rows_dx.data() + i * s.in, s.in, dx + order[i] * s.in);
}

void optimizer_step(train_context& ctx, const adamw_params& hp, std::int64_t step, std::size_t n,
                    float* param, const float* grad, float* m, float* v) {
    const op_profile::scope timed(ctx.profile(), op_kind::optimizer);
    adamw_step(ctx.exec(), hp, step, n, param, grad, m, v);
}

train_context& default_cpu_context() {
    static const std::unique_ptr<executor> exec = make_executor(device_kind::cpu);
    static train_context ctx(*exec, false);
    return ctx;
}

} // namespace ringscale::kernels::model
