// The fp64 reference of train_step --numerics (kernels/model/reference_fp64): its gradient is
// the gradient of its loss (central differences in double, every tensor, with and without
// packed documents); it trains the same model as the fp32 single-rank run, agreeing to fp32
// rounding over the first steps; a perturbed initial parameter makes the same comparison fail;
// bad sizes are refused with one line.
#include "kernels/model/reference_fp64.hpp"
#include "kernels/model/reference_train.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;

namespace {

model_config small() {
    model_config c;
    c.layers = 2;
    c.hidden = 128;
    c.heads = 2;
    c.vocab = 32;
    return c;
}

constexpr std::int64_t seqs = 2, seq_len = 32;
constexpr int steps = 5;

// The fp32 single-rank run and the fp64 reference of the same steps from `init32` (fp32) and
// `init64` (the fp64 run's start, `init32` unless perturbed): what the comparison reads.
struct pair_run {
    std::vector<double> loss32, loss64;
    std::vector<float> grad32, params32;
    std::vector<double> grad64, params64;
};

pair_run run_both(const model_config& c, const std::vector<float>& init32,
                  const std::vector<float>& init64, const adamw_params& hp,
                  const mask_view& mask = {}) {
    pair_run r;
    r.params32 = init32;
    r.grad32.resize(init32.size());
    r.loss32 = reference_train(c, 7, seqs, seq_len, steps, hp, r.params32.data(), r.grad32.data(),
                               default_cpu_context(), mask);
    r.loss64 = reference_train_fp64(
        c, 7, seqs, seq_len, steps, hp, init64.data(), mask,
        [&](int step, double, const double*, const double* g) {
            if (step == 1)
                r.grad64.assign(g, g + init32.size());
        },
        &r.params64);
    return r;
}

// Where the two runs disagree beyond fp32 rounding ("" when they agree): every step's loss
// within 1e-5 relative, step 1's gradient within 1e-4 of the largest, the parameters within
// 0.25 lr per step (the validation's tolerances, jobs/README.md).
std::string disagreement(const pair_run& r, const adamw_params& hp) {
    if (r.loss32.size() != r.loss64.size())
        return "different step counts";
    for (std::size_t s = 0; s < r.loss64.size(); ++s)
        if (!(std::fabs(r.loss32[s] - r.loss64[s]) <= 1e-5 * std::fabs(r.loss64[s])))
            return "loss of step " + std::to_string(s + 1) + ": " + std::to_string(r.loss32[s]) +
                   " vs " + std::to_string(r.loss64[s]);
    double gmax = 0, gerr = 0, perr = 0;
    for (std::size_t i = 0; i < r.grad64.size(); ++i) {
        gmax = std::max(gmax, std::fabs(r.grad64[i]));
        gerr = std::max(gerr, std::fabs(r.grad32[i] - r.grad64[i]));
        perr = std::max(perr, std::fabs(r.params32[i] - r.params64[i]));
    }
    if (!(gerr <= 1e-4 * gmax))
        return "step-1 gradient off by " + std::to_string(gerr) + " of " + std::to_string(gmax);
    if (!(perr <= 0.25 * hp.lr * steps))
        return "parameters off by " + std::to_string(perr);
    return "";
}

std::vector<float> initial(const model_config& c, std::uint64_t seed) {
    std::vector<float> p(param_layout(c).total());
    init_params(c, param_layout(c), seed, p.data());
    return p;
}

// Central differences of the fp64 loss at a few elements of every tensor of every unit: Q, K
// and V's rows of the QKV projection, and (SwiGLU) the gate's and the up projection's rows.
void check_gradient(const model_config& c, const mask_view& mask) {
    const param_layout l(c);
    const std::vector<float> init = initial(c, 3);
    std::vector<double> p(init.begin(), init.end()), g(p.size()), scratch(p.size());
    fp64_loss_and_grads(c, 5, 2, 8, mask, p.data(), g.data());
    const block_offsets& b = l.block();
    const head_offsets& hd = l.head();
    std::vector<std::size_t> at = {0, 17}; // the embedding
    const std::size_t blk = l.unit(1).offset, head = l.unit(l.head_unit()).offset;
    const auto hd_w = static_cast<std::size_t>(c.hidden);
    const auto kv = static_cast<std::size_t>(c.kv_width());
    const auto f = static_cast<std::size_t>(c.ffn_width());
    const std::size_t k_row = hd_w * hd_w, v_row = (hd_w + kv) * hd_w; // K, V first weights
    for (std::size_t o : {b.norm1, b.wqkv, b.wqkv + k_row + 5, b.wqkv + v_row + 9, b.wo, b.bo,
                          b.norm2, b.w1 + 33, b.b1 + 2, b.w2 + 7, b.b2 + 1})
        at.push_back(blk + o);
    if (c.mlp == mlp_kind::swiglu) // the up projection's half of w1 and b1
        for (std::size_t o : {b.w1 + f * hd_w + 40, b.b1 + f + 3})
            at.push_back(blk + o);
    for (std::size_t o : {hd.norm + 3, hd.wout + 21, hd.bout + 4})
        at.push_back(head + o);
    const double h = 1e-5;
    for (const std::size_t i : at) {
        const double keep = p[i];
        p[i] = keep + h;
        const double up = fp64_loss_and_grads(c, 5, 2, 8, mask, p.data(), scratch.data());
        p[i] = keep - h;
        const double down = fp64_loss_and_grads(c, 5, 2, 8, mask, p.data(), scratch.data());
        p[i] = keep;
        const double fd = (up - down) / (2 * h);
        EXPECT_NEAR(g[i], fd, 1e-8 + 1e-6 * std::fabs(fd)) << "element " << i;
    }
}

model_config tiny() {
    model_config c;
    c.layers = 1;
    c.hidden = 64;
    c.heads = 1;
    c.vocab = 16;
    return c;
}

} // namespace

TEST(fp64_reference, gradient_matches_central_differences) {
    check_gradient(tiny(), {});
}

// Grouped-query attention (4 query heads reading 2 K/V heads) and a SwiGLU MLP of width 96.
model_config tiny_gqa_swiglu() {
    model_config c;
    c.layers = 1;
    c.hidden = 256;
    c.heads = 4;
    c.kv_heads = 2;
    c.ffn = 96;
    c.mlp = mlp_kind::swiglu;
    c.vocab = 16;
    return c;
}

TEST(fp64_reference, gradient_matches_central_differences_with_gqa_and_swiglu) {
    check_gradient(tiny_gqa_swiglu(), {});
}

TEST(fp64_reference, gradient_matches_central_differences_with_packed_documents) {
    const std::int64_t starts[] = {0, 3, 8}; // two documents in 8 tokens
    mask_view m;
    m.docs = 2;
    m.doc_start = starts;
    check_gradient(tiny(), m);
}

TEST(fp64_reference, agrees_with_the_fp32_run_to_fp32_rounding) {
    const model_config c = small();
    adamw_params hp;
    hp.lr = 1e-2f;
    const std::vector<float> init = initial(c, 11);
    const pair_run r = run_both(c, init, init, hp);
    EXPECT_EQ(disagreement(r, hp), "");
    EXPECT_LT(r.loss64.back(), r.loss64.front()); // it trains
    // Not bit-equal: fp64 really computes in another precision.
    EXPECT_NE(r.loss32.front(), r.loss64.front());
}

TEST(fp64_reference, agrees_with_the_fp32_run_under_packed_documents) {
    const model_config c = small();
    adamw_params hp;
    hp.lr = 1e-2f;
    const std::int64_t starts[] = {0, 5, 19, 32};
    mask_view m;
    m.docs = 3;
    m.doc_start = starts;
    const std::vector<float> init = initial(c, 12);
    const pair_run masked = run_both(c, init, init, hp, m);
    EXPECT_EQ(disagreement(masked, hp), "");
    const pair_run plain = run_both(c, init, init, hp);
    EXPECT_NE(masked.loss64.front(), plain.loss64.front()); // the mask is applied
}

TEST(fp64_reference, agrees_with_the_fp32_run_with_gqa_and_swiglu) {
    model_config c = small();
    c.hidden = 256;
    c.heads = 4;
    c.kv_heads = 2;
    c.ffn = 320;
    c.mlp = mlp_kind::swiglu;
    adamw_params hp;
    hp.lr = 1e-2f;
    const std::vector<float> init = initial(c, 13);
    const pair_run r = run_both(c, init, init, hp);
    EXPECT_EQ(disagreement(r, hp), "");
    EXPECT_LT(r.loss64.back(), r.loss64.front()); // it trains
    // The shape is really another model: the same seed's plain model starts elsewhere.
    model_config plain = small();
    plain.hidden = 256;
    plain.heads = 4;
    const std::vector<float> init_plain = initial(plain, 13);
    EXPECT_NE(init_plain.size(), init.size());
}

TEST(fp64_reference, a_perturbed_parameter_makes_it_disagree) {
    const model_config c = small();
    adamw_params hp;
    hp.lr = 1e-2f;
    const std::vector<float> init = initial(c, 11);
    std::vector<float> moved = init;
    const param_layout l(c);
    moved[l.unit(l.head_unit()).offset + l.head().norm] += 0.5f; // one final-norm gain
    const pair_run r = run_both(c, init, moved, hp);
    const std::string why = disagreement(r, hp);
    EXPECT_NE(why, "");
    EXPECT_NE(why.find("loss of step 1"), std::string::npos) << why;
}

TEST(fp64_reference, is_deterministic_and_reports_every_step) {
    const model_config c = tiny();
    adamw_params hp;
    const std::vector<float> init = initial(c, 2);
    int calls = 0;
    std::vector<double> a, b;
    const auto la = reference_train_fp64(
        c, 1, 2, 16, 3, hp, init.data(), {},
        [&](int step, double, const double*, const double*) { EXPECT_EQ(step, ++calls); }, &a);
    const auto lb = reference_train_fp64(c, 1, 2, 16, 3, hp, init.data(), {}, {}, &b);
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(la, lb);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.size(), param_layout(c).total());
}

TEST(fp64_reference, bad_sizes_are_refused_with_one_line) {
    const model_config c = tiny();
    const std::vector<float> init = initial(c, 2);
    adamw_params hp;
    EXPECT_THROW(reference_train_fp64(c, 1, 0, 16, 1, hp, init.data(), {}), config_error);
    EXPECT_THROW(reference_train_fp64(c, 1, 2, 0, 1, hp, init.data(), {}), config_error);
    EXPECT_THROW(reference_train_fp64(c, 1, 2, 16, -1, hp, init.data(), {}), config_error);
    model_config bad = c;
    bad.hidden = 100; // not a supported head dimension
    EXPECT_THROW(reference_train_fp64(bad, 1, 2, 16, 1, hp, init.data(), {}), config_error);
    EXPECT_GT(fp64_reference_bytes(c, 16), 8.0 * 4 * static_cast<double>(init.size()));
}
