// Online-softmax merge: two partial attention results over disjoint key sets of the same
// query rows, each a normalised output row O and its log-sum-exp (natural log), combine
// into the result over the union of the key sets. A fully masked partial has LSE = -inf
// and contributes nothing. Pure math, shared by the CPU kernels and the ring loop.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace ringscale::kernels {

/// log(exp(a) + exp(b)) without overflow; -inf when both are -inf.
inline float lse_combine(float a, float b) {
    const float hi = a > b ? a : b;
    if (hi == -std::numeric_limits<float>::infinity())
        return hi;
    const float lo = a > b ? b : a;
    return hi + std::log1p(std::exp(lo - hi));
}

/// Merge one row: out = (exp(lse_a) o_a + exp(lse_b) o_b) / exp(lse_out), `dim` floats.
/// `o_out` may alias `o_a` or `o_b`. A row with both sides -inf becomes zeros, LSE -inf.
inline void softmax_merge_row(const float* o_a, float lse_a, const float* o_b, float lse_b,
                              std::int64_t dim, float* o_out, float* lse_out) {
    const float lse = lse_combine(lse_a, lse_b);
    if (lse == -std::numeric_limits<float>::infinity()) {
        for (std::int64_t d = 0; d < dim; ++d)
            o_out[d] = 0.0f;
        *lse_out = lse;
        return;
    }
    // exp(-inf - finite) = 0, so a fully masked side drops out with no special case.
    const float wa = std::exp(lse_a - lse);
    const float wb = std::exp(lse_b - lse);
    for (std::int64_t d = 0; d < dim; ++d)
        o_out[d] = wa * o_a[d] + wb * o_b[d];
    *lse_out = lse;
}

/// Merge `rows` rows of [rows, dim] partials (a, b) into (o_out, lse_out); outputs may alias
/// either input. Caller owns every buffer.
inline void softmax_merge(const float* o_a, const float* lse_a, const float* o_b,
                          const float* lse_b, std::int64_t rows, std::int64_t dim, float* o_out,
                          float* lse_out) {
    for (std::int64_t r = 0; r < rows; ++r)
        softmax_merge_row(o_a + r * dim, lse_a[r], o_b + r * dim, lse_b[r], dim, o_out + r * dim,
                          lse_out + r);
}

/// Accumulate a block result into (o_acc, lse_acc) in place, `rows` x `dim`. Start an
/// accumulator with softmax_merge_init.
inline void softmax_merge_into(float* o_acc, float* lse_acc, const float* o_block,
                               const float* lse_block, std::int64_t rows, std::int64_t dim) {
    softmax_merge(o_acc, lse_acc, o_block, lse_block, rows, dim, o_acc, lse_acc);
}

/// An empty accumulator: O = 0, LSE = -inf ("no key seen yet"), `rows` x `dim`.
inline void softmax_merge_init(float* o_acc, float* lse_acc, std::int64_t rows, std::int64_t dim) {
    for (std::int64_t i = 0; i < rows * dim; ++i)
        o_acc[i] = 0.0f;
    for (std::int64_t r = 0; r < rows; ++r)
        lse_acc[r] = -std::numeric_limits<float>::infinity();
}

} // namespace ringscale::kernels
