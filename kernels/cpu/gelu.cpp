#include "kernels/cpu/gelu.hpp"

#include "kernels/parallel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ringscale::kernels::cpu {

namespace {
constexpr float sqrt_2_over_pi = 0.7978845608028654f;
constexpr float cubic = 0.044715f;
// Elements per thread below which splitting costs more than it saves.
constexpr std::size_t grain = 1 << 15;

// e^x, branch-free so that the loops below vectorise (no std::exp/std::tanh call per
// element): Cephes' expf reduction x = n·ln2 + r and degree-6 polynomial, ~1 ulp on
// [-87, 87]; the caller keeps x inside that range.
inline float exp_poly(float x) {
    // Round x/ln2 to the nearest integer without a branch: adding 1.5·2^23 leaves no fraction
    // bits (|x/ln2| < 2^22), subtracting it again gives the rounded value.
    const float fn = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const auto n = static_cast<std::int32_t>(fn);
    const float r = (x - fn * 0.693359375f) + fn * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float y = p * r * r + r + 1.0f;
    const std::int32_t bits = (n + 127) << 23; // 2^n
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return y * scale;
}

// tanh(u) = (e^{2u} − 1) / (e^{2u} + 1), u clamped to ±9 where fp32 tanh is exactly ±1.
// Absolute error ~1e-7 (relative precision is lost only near 0, where GELU multiplies by x).
inline float tanh_fast(float u) {
    u = std::min(std::max(u, -9.0f), 9.0f);
    const float e = exp_poly(2.0f * u);
    return (e - 1.0f) / (e + 1.0f);
}

void gelu_fwd_range(std::size_t begin, std::size_t end, const float* x, float* y) {
    for (std::size_t k = begin; k < end; ++k) {
        const float v = x[k];
        const float u = sqrt_2_over_pi * (v + cubic * v * v * v);
        y[k] = 0.5f * v * (1.0f + tanh_fast(u));
    }
}

void gelu_bwd_range(std::size_t begin, std::size_t end, const float* x, const float* dy,
                    float* dx) {
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
