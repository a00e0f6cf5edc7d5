#include "kernels/cpu/cross_entropy.hpp"

#include "kernels/parallel.hpp"
#include "src/base/error.hpp"

#include <array>

#include <algorithm>
#include <cmath>
#include <string>

namespace ringscale::kernels::cpu {

namespace {

// Max and log Σ exp(l − max) of one row, in double: the loss is logsumexp − l[target].
struct row_stats {
    double max;
    double log_sum;
};

row_stats softmax_stats(const float* row, std::size_t vocab) {
    const double max = *std::max_element(row, row + vocab);
    double sum = 0.0;
    for (std::size_t v = 0; v < vocab; ++v)
        sum += std::exp(row[v] - max);
    return {max, std::log(sum)};
}

// Loss of one row; writes scale · (softmax − onehot) into grad when grad is not null.
double row_loss_grad(const float* row, std::size_t vocab, std::int32_t target, double scale,
                     float* grad) {
    const row_stats st = softmax_stats(row, vocab);
    const double loss = st.log_sum + st.max - row[target];
    if (grad) {
        const double shift = st.max + st.log_sum;
        for (std::size_t v = 0; v < vocab; ++v) // reads row[v] before writing grad[v]: may alias
            grad[v] = static_cast<float>(scale * std::exp(row[v] - shift));
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
