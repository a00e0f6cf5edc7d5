#include "kernels/reference/linear_ref.hpp"

namespace ringscale::kernels::reference {

void linear_fwd_ref(const linear_shape& s, const float* x, const float* w, const float* b,
                    float* y) {
    linear_check(s);
    for (std::size_t t = 0; t < s.tokens; ++t)
        for (std::size_t o = 0; o < s.out; ++o) {
            double acc = b ? b[o] : 0.0;
            for (std::size_t i = 0; i < s.in; ++i)
                acc += static_cast<double>(x[t * s.in + i]) * w[o * s.in + i];
            y[t * s.out + o] = static_cast<float>(acc);
        }
}

void linear_bwd_ref(const linear_shape& s, const float* x, const float* w, const float* dy,
                    float* dx, float* dw, float* db) {
    linear_check(s);
    for (std::size_t t = 0; dx && t < s.tokens; ++t)
        for (std::size_t i = 0; i < s.in; ++i) {
            double acc = 0.0;
            for (std::size_t o = 0; o < s.out; ++o)
                acc += static_cast<double>(dy[t * s.out + o]) * w[o * s.in + i];
            dx[t * s.in + i] = static_cast<float>(acc);
        }
    for (std::size_t o = 0; o < s.out; ++o) {
        for (std::size_t i = 0; i < s.in; ++i) {
            double acc = 0.0;
            for (std::size_t t = 0; t < s.tokens; ++t)
                acc += static_cast<double>(dy[t * s.out + o]) * x[t * s.in + i];
            dw[o * s.in + i] += static_cast<float>(acc);
        }
        if (db) {
            double acc = 0.0;
            for (std::size_t t = 0; t < s.tokens; ++t)
                acc += dy[t * s.out + o];
            db[o] += static_cast<float>(acc);
        }
    }
}

} // namespace ringscale::kernels::reference
