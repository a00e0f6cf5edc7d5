#include "planted_gemm_defect.hpp"

#if !RINGSCALE_PLANTED_GEMM_DEFECT
#error "the planted GEMM defect is for test executables only (RINGSCALE_PLANTED_GEMM_DEFECT)"
#endif

#include "kernels/elem.hpp"
#include "kernels/kernels.hpp"

#include <algorithm>

namespace ringscale::test {

namespace {

using kernels::linear_shape;

// acc += part elementwise over n values, rounded to bf16 where another block follows (`more`):
// the defect carries its partial sum from one k-block to the next in bf16.
void accumulate_rounded(float* acc, const float* part, std::size_t n, bool more) {
    for (std::size_t i = 0; i < n; ++i)
        acc[i] = more ? kernels::round_to_bf16(acc[i] + part[i]) : acc[i] + part[i];
}

// Columns [k0, k0 + kb) of the row-major [rows, cols] matrix m into out [rows, kb].
void columns(const float* m, std::size_t rows, std::size_t cols, std::size_t k0, std::size_t kb,
             std::vector<float>& out) {
    out.resize(rows * kb);
    for (std::size_t r = 0; r < rows; ++r)
        std::copy_n(m + r * cols + k0, kb, out.data() + r * kb);
}

// The product GEMMs of one block: the CPU executor's own fp32 kernels.
void fwd_fp32(const linear_shape& s, const float* x, const float* w, float* y) {
    kernels::linear_fwd(kernels::model::default_cpu_context().exec(), kernels::gemm_math::fp32, s,
                        x, w, nullptr, y);
}

} // namespace

bool planted_gemm_defect::fwd(kernels::model::train_dtype t, const linear_shape& s, const float* x,
                              const float* w, const float* b, float* y) {
    if (t != kernels::model::train_dtype::bf16)
        return false;
    // y = x·Wᵀ reduced over in, 64 columns at a time; the accumulator rounded after each.
    m_acc.assign(s.tokens * s.out, 0.0f);
    m_part.resize(s.tokens * s.out);
    for (std::size_t k0 = 0; k0 < s.in; k0 += block) {
        const std::size_t kb = std::min(block, s.in - k0);
        columns(x, s.tokens, s.in, k0, kb, m_a);
        columns(w, s.out, s.in, k0, kb, m_b);
        fwd_fp32({s.tokens, kb, s.out}, m_a.data(), m_b.data(), m_part.data());
        accumulate_rounded(m_acc.data(), m_part.data(), m_acc.size(), k0 + kb < s.in);
    }
    for (std::size_t r = 0; r < s.tokens; ++r)
        for (std::size_t o = 0; o < s.out; ++o)
            y[r * s.out + o] = m_acc[r * s.out + o] + (b ? b[o] : 0.0f);
    return true;
}

bool planted_gemm_defect::bwd(kernels::model::train_dtype t, const linear_shape& s, const float* x,
                              const float* w, const float* dy, float* dx, float* dw, float* db) {
    if (t != kernels::model::train_dtype::bf16)
        return false;
    if (dx) { // dx = dy·W reduced over out: dy's columns and Wᵀ's (W's rows, transposed)
        m_acc.assign(s.tokens * s.in, 0.0f);
        m_part.resize(s.tokens * s.in);
        for (std::size_t k0 = 0; k0 < s.out; k0 += block) {
            const std::size_t kb = std::min(block, s.out - k0);
            columns(dy, s.tokens, s.out, k0, kb, m_a);
            m_b.resize(s.in * kb); // Wᵀ's block [in, kb]
            for (std::size_t o = 0; o < kb; ++o)
                for (std::size_t i = 0; i < s.in; ++i)
                    m_b[i * kb + o] = w[(k0 + o) * s.in + i];
            fwd_fp32({s.tokens, kb, s.in}, m_a.data(), m_b.data(), m_part.data());
            accumulate_rounded(m_acc.data(), m_part.data(), m_acc.size(), k0 + kb < s.out);
        }
        std::copy(m_acc.begin(), m_acc.end(), dx);
    }
    // dW += dyᵀ·x reduced over the tokens, 64 rows at a time (contiguous row blocks).
    m_acc.assign(s.out * s.in, 0.0f);
    m_part.resize(s.out * s.in);
    for (std::size_t k0 = 0; k0 < s.tokens; k0 += block) {
        const std::size_t kb = std::min(block, s.tokens - k0);
        std::fill(m_part.begin(), m_part.end(), 0.0f);
        kernels::linear_bwd(kernels::model::default_cpu_context().exec(), kernels::gemm_math::fp32,
                            {kb, s.in, s.out}, x + k0 * s.in, w, dy + k0 * s.out, nullptr,
                            m_part.data(), nullptr);
        accumulate_rounded(m_acc.data(), m_part.data(), m_acc.size(), k0 + kb < s.tokens);
    }
    for (std::size_t i = 0; i < m_acc.size(); ++i)
        dw[i] += m_acc[i];
    if (db) // the bias gradient's sum over tokens stays the fp32 kernel's
        for (std::size_t r = 0; r < s.tokens; ++r)
            for (std::size_t o = 0; o < s.out; ++o)
                db[o] += dy[r * s.out + o];
    return true;
}

} // namespace ringscale::test
