#include "kernels/linear.hpp"

#include "src/error.hpp"

#include <cblas.h>
#include <climits>
#include <string>
#include <vector>

namespace ringscale::kernels {

void linear_check(const linear_shape& s) {
    RINGSCALE_REQUIRE(
        s.tokens > 0 && s.in > 0 && s.out > 0,
        "linear: tokens, in and out must be > 0 (got tokens=" + std::to_string(s.tokens) +
            ", in=" + std::to_string(s.in) + ", out=" + std::to_string(s.out) + ")");
    const std::size_t limit = INT_MAX;
    RINGSCALE_REQUIRE(s.tokens <= limit && s.in <= limit && s.out <= limit,
                      "linear: a dimension exceeds the BLAS int range");
}

double linear_fwd_flops(const linear_shape& s) {
    return 2.0 * static_cast<double>(s.tokens) * static_cast<double>(s.in) *
           static_cast<double>(s.out);
}

void linear_fwd(const linear_shape& s, const float* x, const float* w, const float* b, float* y) {
    linear_check(s);
    const int m = static_cast<int>(s.tokens), n = static_cast<int>(s.out);
    const int k = static_cast<int>(s.in);
    float beta = 0.0f;
    if (b) {
        // Seed y with the bias so one GEMM with beta = 1 adds the product to it.
        for (std::size_t t = 0; t < s.tokens; ++t)
            for (std::size_t o = 0; o < s.out; ++o)
                y[t * s.out + o] = b[o];
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, k, w, k, beta, y, n);
}

void linear_bwd(const linear_shape& s, const float* x, const float* w, const float* dy, float* dx,
                float* dw, float* db) {
    linear_check(s);
    const int tokens = static_cast<int>(s.tokens), in = static_cast<int>(s.in);
    const int out = static_cast<int>(s.out);
    if (dx) // dx[tokens, in] = dy[tokens, out]·W[out, in]
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, tokens, in, out, 1.0f, dy, out, w,
                    in, 0.0f, dx, in);
    // dw[out, in] += dy[tokens, out]ᵀ·x[tokens, in]
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, tokens, 1.0f, dy, out, x, in,
                1.0f, dw, in);
    if (db) {
        // Sum over thousands of tokens: accumulate in double, add once.
        std::vector<double> sum(s.out, 0.0);
        for (std::size_t t = 0; t < s.tokens; ++t)
            for (std::size_t o = 0; o < s.out; ++o)
                sum[o] += dy[t * s.out + o];
        for (std::size_t o = 0; o < s.out; ++o)
            db[o] += static_cast<float>(sum[o]);
    }
}

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

} // namespace ringscale::kernels
