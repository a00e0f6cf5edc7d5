#include "kernels/model/train_context.hpp"

#include <algorithm>
#include <memory>

namespace ringscale::kernels::model {

train_context::train_context(executor& exec, bool allow_tf32)
    : m_exec(exec), m_math(allow_tf32 ? gemm_math::tf32 : gemm_math::fp32) {
    prepare_gemm(m_exec, m_math);
}

namespace {

cpu_gemm_override* g_override = nullptr;

// `buf` grown to at least `n` elements on `exec` (its contents dropped when it grows).
template <class T>
T* at_least(executor& exec, dev_buffer<T>& buf, std::size_t n) {
    if (buf.size() < n)
        buf.allocate(exec, n);
    return buf.data();
}

} // namespace

void set_cpu_gemm_override(cpu_gemm_override* o) {
    g_override = o;
}

bool train_context::overridden() const {
    return g_override && m_exec.kind() == device_kind::cpu;
}

void train_context::plain_fwd(const linear_shape& s, const float* x, const float* w, const float* b,
                              float* y) {
    if (!(overridden() && g_override->fwd(m_mixed.config().dtype, s, x, w, b, y)))
        linear_fwd(m_exec, m_math, s, x, w, b, y);
}

void train_context::plain_bwd(const linear_shape& s, const float* x, const float* w,
                              const float* dy, float* dx, float* dw, float* db) {
    if (!(overridden() && g_override->bwd(m_mixed.config().dtype, s, x, w, dy, dx, dw, db)))
        linear_bwd(m_exec, m_math, s, x, w, dy, dx, dw, db);
}

bool train_context::device_lowp() const {
    return m_exec.kind() != device_kind::cpu && m_mixed.active();
}

lowp_gemm train_context::lowp_for(int site) {
    lowp_gemm g;
    const train_dtype t = m_mixed.config().dtype;
    g.type = t == train_dtype::bf16   ? lowp_type::bf16
             : t == train_dtype::fp16 ? lowp_type::f16
                                      : lowp_type::fp8;
    if (t == train_dtype::fp16) {
        g.dy_scale = m_mixed.config().loss_scale;
        g.overflowed = [this](std::uint64_t n) { m_mixed.count_overflows(n); };
    }
    if (t == train_dtype::fp8)
        g.fp8_scale = [this, site](lowp_operand op, float amax) {
            const gemm_operand o = op == lowp_operand::x   ? gemm_operand::x
                                   : op == lowp_operand::w ? gemm_operand::w
                                                           : gemm_operand::dy;
            return m_mixed.fp8_scale(site, o, amax);
        };
    return g;
}

std::string gemm_dtype_of(device_kind device, gemm_math math, train_dtype dtype) {
    if (device != device_kind::cpu && dtype != train_dtype::fp32)
        return train_dtype_name(dtype);
    return math == gemm_math::tf32 ? "tf32" : "fp32";
}

void train_context::round_attention(float* v, std::size_t n) const {
    if (m_exec.kind() == device_kind::cpu)
        m_mixed.round_attention(v, n);
}

std::string train_context::precision() const {
    if (!device_lowp())
        return train_precision(m_exec, m_math);
    return std::string(train_dtype_name(m_mixed.config().dtype)) +
           " GEMMs through cuBLASLt (fp32 accumulation), fp32 master weights and AdamW, "
           "attention Q/K/V/dO in bf16";
}

std::string train_context::storage() const {
    const train_dtype t = m_mixed.config().dtype;
    const char* gemm = t == train_dtype::bf16      ? "bf16"
                       : t == train_dtype::fp16    ? "fp16 (output gradients loss-scaled)"
                       : t == train_dtype::fp8     ? "E4M3 activations and weights, E5M2 output "
                                                     "gradients, per-tensor scales"
                       : m_math == gemm_math::tf32 ? "fp32 (multiplied in TF32)"
                                                   : "fp32";
    // The attention's inputs: on the CPU the dtype's (fp8 attends in bf16, fp32 unrounded);
    // a GPU's attention kernels read bf16 whatever the dtype.
    const bool cpu = m_exec.kind() == device_kind::cpu;
    const char* attn = !cpu                     ? "bf16"
                       : t == train_dtype::fp16 ? "fp16"
                       : t == train_dtype::fp32 ? "fp32"
                                                : "bf16";
    return std::string("master weights, gradients, AdamW moments and saved activations fp32; "
                       "gradients reduced in fp32; GEMM inputs ") +
           gemm + " with fp32 accumulation; attention Q, K, V, dO " + attn +
           ", O, LSE and their gradients fp32";
}

void train_context::gemm_fwd(int site, const linear_shape& s, const float* x, const float* w,
                             const float* b, float* y) {
    if (m_progress)
        m_progress();
    if (device_lowp()) {
        linear_fwd_lowp(m_exec, lowp_for(site), s, x, w, b, y);
        return;
    }
    const float* xr = m_mixed.gemm_input(site, gemm_operand::x, x, s.tokens * s.in);
    const float* wr = m_mixed.gemm_input(site, gemm_operand::w, w, s.out * s.in);
    plain_fwd(s, xr, wr, b, y);
}

void train_context::gemm_fwd_heads(int site, const linear_shape& s, const float* x, const float* w,
                                   const float* b, const batch_shape& bs, std::int64_t heads,
                                   std::int64_t d, float* const* dst, float* scratch) {
    if (device_lowp() || overridden()) { // y to scratch, then each group of heads moved
        gemm_fwd(site, s, x, w, b, scratch);
        const auto group = heads * d;
        for (std::int64_t g = 0; g < static_cast<std::int64_t>(s.out) / group; ++g)
            to_bhsd(m_exec, bs, heads, d, scratch, static_cast<std::int64_t>(s.out), g * group,
                    dst[g]);
        return;
    }
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
    if (device_lowp() || overridden() || m_mixed.reorders()) {
        // dx to scratch (the floor's rows put back there), then moved to heads
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
    // The numerics floor's runs: the rows in a random order, so the weight gradient's sum over
    // tokens is really reordered; dx's rows are put back (each row's own sum keeps its order).
    const std::vector<std::size_t> order = m_mixed.row_order(s.tokens);
    if (order.empty()) {
        dtype_bwd(site, s, x, w, dy, dx, dw, db);
        return;
    }
    m_rows_order.assign(order.begin(), order.end());
    at_least(m_exec, m_rows_index, order.size());
    m_rows_index.upload(m_rows_order.data(), order.size());
    const row_positions index{m_rows_order.data(), m_rows_index.data(),
                              static_cast<std::int64_t>(order.size()), false};
    const auto t = static_cast<std::int64_t>(s.tokens);
    float* xs = at_least(m_exec, m_rows_x, s.tokens * s.in);
    float* dys = at_least(m_exec, m_rows_dy, s.tokens * s.out);
    float* dxs = dx ? at_least(m_exec, m_rows_dx, s.tokens * s.in) : nullptr;
    take_rows(m_exec, s.in * sizeof(float), 1, t, index, x, xs);
    take_rows(m_exec, s.out * sizeof(float), 1, t, index, dy, dys);
    dtype_bwd(site, s, xs, w, dys, dxs, dw, db);
    if (dx)
        put_rows(m_exec, s.in * sizeof(float), 1, t, index, dxs, dx);
}

void train_context::dtype_bwd(int site, const linear_shape& s, const float* x, const float* w,
                              const float* dy, float* dx, float* dw, float* db) {
    if (device_lowp()) {
        linear_bwd_lowp(m_exec, lowp_for(site), s, x, w, dy, dx, dw, db);
        return;
    }
    const float* xr = m_mixed.gemm_input(site, gemm_operand::x, x, s.tokens * s.in);
    const float* wr = m_mixed.gemm_input(site, gemm_operand::w, w, s.out * s.in);
    const float* dyr = m_mixed.gemm_input(site, gemm_operand::dy, dy, s.tokens * s.out);
    plain_bwd(s, xr, wr, dyr, dx, dw, db);
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
