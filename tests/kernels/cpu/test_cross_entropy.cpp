// cross_entropy: loss against the double-precision definition, global-token normalisation
// across shards, gradient against central finite differences in double, stability, bad input.
#include "kernels/cpu/cross_entropy.hpp"
#include "kernels/random.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;

namespace {

std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

std::vector<std::int32_t> seeded_targets(std::size_t n, std::size_t vocab, std::uint64_t seed) {
    std::vector<std::int32_t> t(n);
    for (std::size_t k = 0; k < n; ++k)
        t[k] = static_cast<std::int32_t>(mix64(seed ^ mix64(k)) % vocab);
    return t;
}

// The definition in double (naive logsumexp is fine for |logits| <= 4).
double loss_def(std::size_t tokens, std::size_t vocab, std::size_t total,
                const std::vector<double>& logits, const std::vector<std::int32_t>& targets) {
    double sum = 0.0;
    for (std::size_t t = 0; t < tokens; ++t) {
        double z = 0.0;
        for (std::size_t v = 0; v < vocab; ++v)
            z += std::exp(logits[t * vocab + v]);
        sum += std::log(z) - logits[t * vocab + targets[t]];
    }
    return sum / total;
}

} // namespace

TEST(cross_entropy, loss_matches_double_definition) {
    const std::size_t tokens = 50, vocab = 37;
    const auto logits = seeded(tokens * vocab, 1, 4.0f);
    const auto targets = seeded_targets(tokens, vocab, 2);
    const double loss = cross_entropy_fwd(tokens, vocab, tokens, logits.data(), targets.data());
    const double want = loss_def(tokens, vocab, tokens, {logits.begin(), logits.end()}, targets);
    EXPECT_NEAR(loss, want, 1e-12 * want); // both in double from the same fp32 logits
    std::vector<float> grad(logits.size());
    EXPECT_DOUBLE_EQ(
        cross_entropy_fwd_bwd(tokens, vocab, tokens, logits.data(), targets.data(), grad.data()),
        loss);
}

TEST(cross_entropy, uniform_logits_give_log_vocab) {
    const std::size_t tokens = 4, vocab = 10;
    const std::vector<float> logits(tokens * vocab, 0.5f);
    const std::vector<std::int32_t> targets{0, 3, 9, 3};
    EXPECT_NEAR(cross_entropy_fwd(tokens, vocab, tokens, logits.data(), targets.data()),
                std::log(10.0), 1e-15);
}

TEST(cross_entropy, shards_with_global_count_sum_to_single_rank_loss_and_gradient) {
    const std::size_t tokens = 24, vocab = 11, split = 10;
    const auto logits = seeded(tokens * vocab, 11, 3.0f);
    const auto targets = seeded_targets(tokens, vocab, 12);
    std::vector<float> grad(logits.size()), grad_shards(logits.size());
    const double whole =
        cross_entropy_fwd_bwd(tokens, vocab, tokens, logits.data(), targets.data(), grad.data());
    const double a = cross_entropy_fwd_bwd(split, vocab, tokens, logits.data(), targets.data(),
                                           grad_shards.data());
    const double b =
        cross_entropy_fwd_bwd(tokens - split, vocab, tokens, logits.data() + split * vocab,
                              targets.data() + split, grad_shards.data() + split * vocab);
    EXPECT_NEAR(a + b, whole, 1e-14 * whole); // only the order of a double sum differs
    EXPECT_EQ(grad_shards, grad);             // rows are computed identically
}

TEST(cross_entropy, gradient_matches_central_differences) {
    const std::size_t tokens = 3, vocab = 5, total = 7; // a shard of a 7-token batch
    const auto lf = seeded(tokens * vocab, 21, 2.0f);
    const auto targets = seeded_targets(tokens, vocab, 22);
    const float dloss = 1.5f;
    std::vector<float> grad(lf.size(), std::numeric_limits<float>::quiet_NaN());
    cross_entropy_bwd(tokens, vocab, total, lf.data(), targets.data(), grad.data(), dloss);
    std::vector<double> l(lf.begin(), lf.end());
    const double h = 1e-6;
    for (std::size_t k = 0; k < l.size(); ++k) {
        const double saved = l[k];
        l[k] = saved + h;
        const double up = loss_def(tokens, vocab, total, l, targets);
        l[k] = saved - h;
        const double down = loss_def(tokens, vocab, total, l, targets);
        l[k] = saved;
        // |grad| <= dloss / total ~ 0.2: fp32 rounding far below 1e-6.
        EXPECT_NEAR(grad[k], dloss * (up - down) / (2.0 * h), 1e-6) << "logit " << k;
    }
    for (std::size_t t = 0; t < tokens; ++t) { // softmax − onehot sums to zero per row
        double row = 0.0;
        for (std::size_t v = 0; v < vocab; ++v)
            row += grad[t * vocab + v];
        EXPECT_NEAR(row, 0.0, 1e-7);
    }
}

TEST(cross_entropy, large_logits_are_stable_and_in_place_works) {
    const std::size_t tokens = 2, vocab = 3;
    std::vector<float> logits{1e4f, 1e4f, 1e4f, -1e4f, 0.0f, 1e4f};
    const std::vector<std::int32_t> targets{1, 2};
    std::vector<float> grad(logits.size());
    const double loss =
        cross_entropy_fwd_bwd(tokens, vocab, tokens, logits.data(), targets.data(), grad.data());
    EXPECT_NEAR(loss, std::log(3.0) / 2.0, 1e-12); // row 0: ln 3; row 1: ~0
    for (float g : grad)
        EXPECT_TRUE(std::isfinite(g));
    EXPECT_NEAR(grad[1], (1.0 / 3.0 - 1.0) / 2.0, 1e-7);
    cross_entropy_fwd_bwd(tokens, vocab, tokens, logits.data(), targets.data(), logits.data());
    EXPECT_EQ(logits, grad);
}

TEST(cross_entropy, bad_targets_and_counts_are_config_errors) {
    const std::vector<float> logits(6, 0.0f);
    std::vector<float> grad(6);
    const std::vector<std::int32_t> bad_high{0, 3}, bad_neg{-1, 0}, ok{0, 2};
    EXPECT_THROW(cross_entropy_fwd(2, 3, 2, logits.data(), bad_high.data()),
                 ringscale::config_error);
    EXPECT_THROW(cross_entropy_bwd(2, 3, 2, logits.data(), bad_neg.data(), grad.data()),
                 ringscale::config_error);
    EXPECT_THROW(cross_entropy_fwd(2, 3, 1, logits.data(), ok.data()), ringscale::config_error);
    EXPECT_THROW(cross_entropy_fwd(0, 3, 2, logits.data(), ok.data()), ringscale::config_error);
}
