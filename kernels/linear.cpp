#include "kernels/linear.hpp"

#include "kernels/parallel.hpp"
#include "src/error.hpp"

#include <algorithm>
#include <array>

#include <cblas.h>
#include <climits>
#include <string>
#include <vector>

namespace ringscale::kernels {

namespace {

// db[o] += Σ_t dy[t, o] for columns [begin, end): over thousands of tokens, accumulated in
// double (a block of columns at a time, on the stack) and added once.
void bias_grad_cols(const linear_shape& s, const float* dy, std::size_t begin, std::size_t end,
                    float* db) {
    constexpr std::size_t block = 64;
    for (std::size_t o0 = begin; o0 < end; o0 += block) {
        const std::size_t width = std::min(block, end - o0);
        std::array<double, block> sum{};
        for (std::size_t t = 0; t < s.tokens; ++t) {
            const float* row = dy + t * s.out + o0;
            for (std::size_t o = 0; o < width; ++o)
                sum[o] += row[o];
        }
        for (std::size_t o = 0; o < width; ++o)
            db[o0 + o] += static_cast<float>(sum[o]);
    }
}

} // namespace

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
        parallel_for(s.tokens, std::max<std::size_t>(1, 16384 / s.out),
                     [&](std::size_t begin, std::size_t end) {
                         for (std::size_t t = begin; t < end; ++t)
                             std::copy(b, b + s.out, y + t * s.out);
                     });
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
    if (db) // split over the rank's threads by output column
        parallel_for(s.out, 64, [&](std::size_t begin, std::size_t end) {
            bias_grad_cols(s, dy, begin, end, db);
        });
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
