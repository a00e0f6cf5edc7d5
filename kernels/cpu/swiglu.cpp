#include "kernels/cpu/swiglu.hpp"

#include "kernels/parallel.hpp"

#include <cmath>

namespace ringscale::kernels::cpu {

namespace {
// Rows per thread below which splitting costs more than it saves (rows of a few thousand).
constexpr std::size_t grain = 8;

inline float sigmoid(float x) {
    return 1.0f / (1.0f + std::exp(-x));
}
} // namespace

void swiglu_fwd(std::size_t rows, std::size_t f, const float* h1, float* g) {
    parallel_for(rows, grain, [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r) {
            const float* gate = h1 + r * 2 * f;
            const float* up = gate + f;
            float* out = g + r * f;
            for (std::size_t c = 0; c < f; ++c)
                out[c] = gate[c] * sigmoid(gate[c]) * up[c];
        }
    });
}

void swiglu_bwd(std::size_t rows, std::size_t f, const float* h1, const float* dg, float* dh1) {
    parallel_for(rows, grain, [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r) {
            const float* gate = h1 + r * 2 * f;
            const float* up = gate + f;
            const float* d = dg + r * f;
            float* dgate = dh1 + r * 2 * f;
            float* dup = dgate + f;
            for (std::size_t c = 0; c < f; ++c) {
                const float x = gate[c], s = sigmoid(x);
                dgate[c] = d[c] * up[c] * s * (1.0f + x * (1.0f - s));
                dup[c] = d[c] * x * s;
            }
        }
    });
}

} // namespace ringscale::kernels::cpu
