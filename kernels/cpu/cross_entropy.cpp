#include "kernels/cpu/cross_entropy.hpp"

#include "kernels/cpu/attention_row_ops.hpp"
#include "kernels/cpu/vec_math.hpp"
#include "kernels/parallel.hpp"
#include "src/base/error.hpp"

#include <array>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace ringscale::kernels::cpu {

namespace {

constexpr std::size_t k_lanes = 16; // one AVX-512 register of floats, two of doubles

// Max and log Σ exp(l − max) of one row, the sum in double: the loss is logsumexp − l[target].
struct row_stats {
    double max;
    double log_sum;
};

// The max is the attention rows' (by lanes); the sum keeps partial results by lane, so GCC
// vectorises it without -ffast-math; exp is exp_poly_d (a few ulp of fp64), not libm's.
RINGSCALE_VEC_CLONES row_stats softmax_stats(const float* row, std::size_t vocab) {
    const double max = row_max(row, static_cast<std::int64_t>(vocab));
    std::size_t v = 0;
    double lane_sum[k_lanes] = {};
    for (; v + k_lanes <= vocab; v += k_lanes)
        for (std::size_t l = 0; l < k_lanes; ++l)
            lane_sum[l] += exp_poly_d(row[v + l] - max);
    double sum = 0.0;
    for (std::size_t l = 0; l < k_lanes; ++l)
        sum += lane_sum[l];
    for (; v < vocab; ++v)
        sum += exp_poly_d(row[v] - max);
    return {max, std::log(sum)};
}

// grad[v] = scale · exp(row[v] − shift) for v < vocab. grad may be row (in place): each block
// of lanes is read whole before it is written.
RINGSCALE_VEC_CLONES void softmax_grad(const float* row, std::size_t vocab, double shift,
                                       double scale, float* grad) {
    std::size_t v = 0;
    for (; v + k_lanes <= vocab; v += k_lanes) {
        float in[k_lanes], out[k_lanes];
        std::memcpy(in, row + v, sizeof in);
        for (std::size_t l = 0; l < k_lanes; ++l)
            out[l] = static_cast<float>(scale * exp_poly_d(in[l] - shift));
        std::memcpy(grad + v, out, sizeof out);
    }
    for (; v < vocab; ++v)
        grad[v] = static_cast<float>(scale * exp_poly_d(row[v] - shift));
}

// Loss of one row; writes scale · (softmax − onehot) into grad when grad is not null.
double row_loss_grad(const float* row, std::size_t vocab, std::int32_t target, double scale,
                     float* grad) {
    const row_stats st = softmax_stats(row, vocab);
    const double loss = st.log_sum + st.max - row[target];
    if (grad) {
        softmax_grad(row, vocab, st.max + st.log_sum, scale, grad);
        grad[target] = static_cast<float>(grad[target] - scale);
    }
    return loss;
}

double run(std::size_t tokens, std::size_t vocab, std::size_t total_tokens, const float* logits,
           const std::int32_t* targets, float* dlogits, float dloss) {
    cross_entropy_check(tokens, vocab, total_tokens, targets);
    const double scale = static_cast<double>(dloss) / static_cast<double>(total_tokens);
    // Rows split over the rank's threads; each chunk sums its rows' losses in order and the
    // chunks' sums are added in chunk order: the same result with any thread count.
    std::array<double, max_chunks> sums{};
    const std::size_t grain = std::max<std::size_t>(1, (std::size_t{1} << 15) / vocab);
    parallel_for_chunks(tokens, grain, [&](std::size_t c, std::size_t begin, std::size_t end) {
        double sum = 0.0;
        for (std::size_t t = begin; t < end; ++t)
            sum += row_loss_grad(logits + t * vocab, vocab, targets[t], scale,
                                 dlogits ? dlogits + t * vocab : nullptr);
        sums[c] = sum;
    });
    double sum = 0.0;
    for (const double s : sums)
        sum += s;
    return sum / static_cast<double>(total_tokens);
}

} // namespace

void cross_entropy_check(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                         const std::int32_t* targets) {
    RINGSCALE_REQUIRE(tokens > 0 && vocab > 0, "cross_entropy: tokens and vocab must be > 0");
    RINGSCALE_REQUIRE(total_tokens >= tokens,
                      "cross_entropy: total_tokens (" + std::to_string(total_tokens) +
                          ") must be >= this shard's tokens (" + std::to_string(tokens) + ")");
    for (std::size_t t = 0; t < tokens; ++t)
        RINGSCALE_REQUIRE(targets[t] >= 0 && static_cast<std::size_t>(targets[t]) < vocab,
                          "cross_entropy: target " + std::to_string(targets[t]) + " at token " +
                              std::to_string(t) + " is outside [0, " + std::to_string(vocab) + ")");
}

double cross_entropy_fwd(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                         const float* logits, const std::int32_t* targets) {
    return run(tokens, vocab, total_tokens, logits, targets, nullptr, 1.0f);
}

void cross_entropy_bwd(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                       const float* logits, const std::int32_t* targets, float* dlogits,
                       float dloss) {
    run(tokens, vocab, total_tokens, logits, targets, dlogits, dloss);
}

double cross_entropy_fwd_bwd(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                             const float* logits, const std::int32_t* targets, float* dlogits) {
    return run(tokens, vocab, total_tokens, logits, targets, dlogits, 1.0f);
}

} // namespace ringscale::kernels::cpu
