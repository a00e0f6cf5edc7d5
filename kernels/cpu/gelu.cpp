#include "kernels/cpu/gelu.hpp"

#include "kernels/cpu/vec_math.hpp"
#include "kernels/parallel.hpp"

#include <algorithm>

namespace ringscale::kernels::cpu {

namespace {
constexpr float sqrt_2_over_pi = 0.7978845608028654f;
constexpr float cubic = 0.044715f;
// Elements per thread below which splitting costs more than it saves.
constexpr std::size_t grain = 1 << 15;

// tanh(u) = (e^{2u} − 1) / (e^{2u} + 1), u clamped to ±9 where fp32 tanh is exactly ±1.
// Absolute error ~1e-7 (relative precision is lost only near 0, where GELU multiplies by x).
inline float tanh_fast(float u) {
    u = std::min(std::max(u, -9.0f), 9.0f);
    const float e = exp_poly(2.0f * u);
    return (e - 1.0f) / (e + 1.0f);
}

RINGSCALE_VEC_CLONES void gelu_fwd_range(std::size_t begin, std::size_t end, const float* x,
                                         float* y) {
    for (std::size_t k = begin; k < end; ++k) {
        const float v = x[k];
        const float u = sqrt_2_over_pi * (v + cubic * v * v * v);
        y[k] = 0.5f * v * (1.0f + tanh_fast(u));
    }
}

RINGSCALE_VEC_CLONES void gelu_bwd_range(std::size_t begin, std::size_t end, const float* x,
                                         const float* dy, float* dx) {
    for (std::size_t k = begin; k < end; ++k) {
        const float v = x[k];
        const float t = tanh_fast(sqrt_2_over_pi * (v + cubic * v * v * v));
        const float du = sqrt_2_over_pi * (1.0f + 3.0f * cubic * v * v);
        const float grad = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
        dx[k] = dy[k] * grad;
    }
}

} // namespace

void gelu_fwd(std::size_t n, const float* x, float* y) {
    parallel_for(n, grain, [&](std::size_t b, std::size_t e) { gelu_fwd_range(b, e, x, y); });
}

void gelu_bwd(std::size_t n, const float* x, const float* dy, float* dx) {
    parallel_for(n, grain, [&](std::size_t b, std::size_t e) { gelu_bwd_range(b, e, x, dy, dx); });
}

} // namespace ringscale::kernels::cpu
