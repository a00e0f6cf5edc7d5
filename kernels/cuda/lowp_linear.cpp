#include "kernels/cuda/lowp_linear.hpp"

#include "kernels/cuda/cublaslt_quantize.cuh"
#include "kernels/cuda/dense.cuh"
#include "kernels/cuda/lowp_cast.cuh"
#include "src/base/error.hpp"

namespace ringscale::kernels::cuda {

namespace {

std::size_t bytes_of(lt_type t) {
    return lt_is_fp8(t) ? 1 : 2;
}

} // namespace

lowp_linear::lowp_linear(executor& exec)
    : m_exec(exec), m_lt(exec.stream()), m_scalars(exec, 4), m_overflows(exec, 1) {}

float lowp_linear::scale_of(const lowp_gemm& g, const lowp_use& u, const float* src, int slot) {
    if (!lt_is_fp8(u.type))
        return u.op == lowp_operand::dy && g.type == lowp_type::f16 ? g.dy_scale : 1.0f;
    RINGSCALE_REQUIRE(static_cast<bool>(g.fp8_scale), "fp8 GEMMs need their scale bookkeeping");
    // The amax pass (its fp8 values are overwritten below), then the host's scale for it.
    m_exec.zero(m_scalars.data(), sizeof(float));
    quantize_fp8_cuda(u.type, u.rows, u.cols, src, 1.0f, false, m_operand[slot].data(),
                      m_scalars.data(), m_exec.stream());
    const float amax = m_scalars.download(1)[0]; // waits for the stream
    return g.fp8_scale(u.op, amax);
}

const void* lowp_linear::prepare(const lowp_gemm& g, const lowp_use& u, const float* src, int slot,
                                 float* scale, bool count) {
    const auto n = static_cast<std::size_t>(u.rows * u.cols);
    if (m_operand[slot].size() < n * bytes_of(u.type))
        m_operand[slot].allocate(m_exec, n * bytes_of(u.type));
    *scale = scale_of(g, u, src, slot);
    void* dst = m_operand[slot].data();
    if (!lt_is_fp8(u.type)) {
        const bool counted = count && g.type == lowp_type::f16 && static_cast<bool>(g.overflowed);
        if (counted)
            m_exec.zero(m_overflows.data(), sizeof(unsigned long long));
        cast_lowp_cuda(u.type, n, src, *scale, dst, counted ? m_overflows.data() : nullptr,
                       m_exec.stream());
        if (counted)
            if (const unsigned long long inf = m_overflows.download(1)[0]; inf > 0)
                g.overflowed(inf);
        return dst;
    }
    quantize_fp8_cuda(u.type, u.rows, u.cols, src, *scale, u.transposed, dst, m_scalars.data() + 1,
                      m_exec.stream());
    const float inverse = 1.0f / *scale;
    m_exec.upload(m_scalars.data() + 2 + slot, &inverse, sizeof(float));
    return dst;
}

void lowp_linear::run(const lowp_gemm& g, const lowp_plan& p, const float* src_a,
                      const float* src_b, float* d, float* dy_scale, bool count_a) {
    const std::string why = lt_refusal(p.shape);
    if (!why.empty())
        throw config_error(why);
    float sa = 1, sb = 1;
    const void* a = prepare(g, p.a, src_a, 0, &sa, count_a);
    const void* b = prepare(g, p.b, src_b, 1, &sb, true);
    const bool fp8 = g.type == lowp_type::fp8;
    // fp8 dequantises through the scale operands; fp16's loss-scaled dy through alpha.
    const float alpha = fp8 ? 1.0f : 1.0f / (sa * sb);
    m_lt.run(p.shape, a, b, d, alpha, p.beta, fp8 ? m_scalars.data() + 2 : nullptr,
             fp8 ? m_scalars.data() + 3 : nullptr);
    if (dy_scale)
        *dy_scale = p.a.op == lowp_operand::dy ? sa : sb;
}

void lowp_linear::forward(const lowp_gemm& g, const linear_shape& s, const float* x, const float* w,
                          const float* b, float* y) {
    linear_check(s);
    lowp_plan p = plan_lowp_gemm(g.type, s, lowp_pass::fwd);
    if (b) { // y = b first, then the GEMM adds x·Wᵀ
        bias_broadcast_cuda(s.tokens, s.out, b, y, m_exec.stream());
        p.beta = 1;
    }
    run(g, p, x, w, y);
}

void lowp_linear::backward(const lowp_gemm& g, const linear_shape& s, const float* x,
                           const float* w, const float* dy, float* dx, float* dw, float* db) {
    linear_check(s);
    if (dx) // dy's overflows are counted once, by the dW GEMM's cast, as the CPU counts them
        run(g, plan_lowp_gemm(g.type, s, lowp_pass::dx), dy, w, dx, nullptr, false);
    float dy_scale = 1;
    run(g, plan_lowp_gemm(g.type, s, lowp_pass::dw), dy, x, dw, &dy_scale);
    if (!db)
        return;
    const std::size_t n = s.tokens * s.out;
    if (m_rounded.size() < n)
        m_rounded.allocate(m_exec, n);
    round_lowp_cuda(lowp_type_of(g.type, lowp_operand::dy), n, dy, dy_scale, m_rounded.data(),
                    m_exec.stream());
    bias_grad_cuda(s.tokens, s.out, m_rounded.data(), db, m_exec.stream());
}

} // namespace ringscale::kernels::cuda
