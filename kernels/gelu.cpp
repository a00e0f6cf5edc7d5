#include "kernels/gelu.hpp"

#include <cmath>

namespace ringscale::kernels {

namespace {
constexpr float sqrt_2_over_pi = 0.7978845608028654f;
constexpr float cubic = 0.044715f;
} // namespace

void gelu_fwd(std::size_t n, const float* x, float* y) {
    for (std::size_t k = 0; k < n; ++k) {
        const float v = x[k];
        const float u = sqrt_2_over_pi * (v + cubic * v * v * v);
        y[k] = 0.5f * v * (1.0f + std::tanh(u));
    }
}

void gelu_bwd(std::size_t n, const float* x, const float* dy, float* dx) {
    for (std::size_t k = 0; k < n; ++k) {
        const float v = x[k];
        const float t = std::tanh(sqrt_2_over_pi * (v + cubic * v * v * v));
        const float du = sqrt_2_over_pi * (1.0f + 3.0f * cubic * v * v);
        const float grad = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
        dx[k] = dy[k] * grad;
    }
}

} // namespace ringscale::kernels
