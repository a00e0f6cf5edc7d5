// The training step's model (kernels/model/transformer.hpp): the whole model's backward against
// central finite differences (every tensor of every unit, attention included), the fast
// attention core against the reference kernel inside the model, the floor's reordered sums,
// micro-batch accumulation, and the per-operation profile.
#include "tests/kernels/model/model_rig.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;
using namespace ringscale::test_model;

namespace {

// The model's gradient against central differences at 3 elements of every tensor (its largest
// and two seeded ones); returns the largest error.
double check_central_differences(const model_config& c) {
    rig r(c, 2, 64);
    local_attention_core core(default_cpu_context().exec(), iota(64));
    r.loss_and_grads(core);
    const std::vector<float> g = r.grads;
    const double h = 1e-2;
    int checked = 0;
    double worst = 0;
    for (const tensor& t : tensors_of(r.cfg, r.layout)) {
        std::vector<std::size_t> picks;
        std::size_t top = t.offset;
        for (std::size_t k = t.offset; k < t.offset + t.size; ++k)
            if (std::fabs(g[k]) > std::fabs(g[top]))
                top = k;
        picks.push_back(top);
        picks.push_back(t.offset + (mix64(checked + 1) % t.size));
        picks.push_back(t.offset + (mix64(checked + 2) % t.size));
        for (std::size_t k : picks) {
            const float saved = r.params[k];
            r.params[k] = saved + static_cast<float>(h);
            const double up = r.loss_and_grads(core, false);
            r.params[k] = saved - static_cast<float>(h);
            const double down = r.loss_and_grads(core, false);
            r.params[k] = saved;
            const double fd = (up - down) / (2 * h), err = std::fabs(fd - g[k]);
            worst = std::max(worst, err);
            EXPECT_LE(err, 1e-4 + 2e-2 * std::fabs(fd)) << t.name << "[" << k - t.offset << "]";
            ++checked;
        }
        EXPECT_GT(std::fabs(g[top]), 1e-4) << t.name << ": gradient vanishes, test is blind";
    }
    EXPECT_EQ(checked, 3 * (4 + 9 * c.layers));
    return worst;
}

// The model's loss and gradients with the fast attention core and with the reference kernel.
void expect_fast_core_matches_reference(const model_config& c) {
    rig fast(c, 2, 128), ref(c, 2, 128);
    local_attention_core core(default_cpu_context().exec(), iota(128));
    ref_core oracle(iota(128));
    const double lf = fast.loss_and_grads(core), lr = ref.loss_and_grads(oracle);
    EXPECT_NEAR(lf, lr, 1e-5);
    double worst = 0;
    for (std::size_t k = 0; k < fast.grads.size(); ++k)
        worst = std::max(worst, static_cast<double>(std::fabs(fast.grads[k] - ref.grads[k])));
    EXPECT_LT(worst, 1e-5);
}

} // namespace

TEST(transformer, backward_matches_central_differences_for_every_tensor) {
    RecordProperty("max_abs_err", std::to_string(check_central_differences(tiny())));
}

TEST(transformer, backward_matches_central_differences_with_gqa_and_swiglu) {
    RecordProperty("max_abs_err", std::to_string(check_central_differences(tiny_gqa_swiglu())));
}

TEST(transformer, fast_attention_core_matches_reference_inside_the_model) {
    expect_fast_core_matches_reference(tiny());
}

TEST(transformer, gqa_fast_attention_core_matches_reference_inside_the_model) {
    expect_fast_core_matches_reference(tiny_gqa_swiglu());
}

// train_step --numerics' floor runs: the attention in random key and query blocks and the
// GEMMs' weight gradients summed over the tokens in a random order compute the same loss and
// gradients up to fp32 rounding, and not bit for bit (the sums really are reordered).
TEST(transformer, the_floors_reordered_sums_match_the_plain_ones) {
    rig plain(tiny(), 2, 128), reordered(tiny(), 2, 128);
    local_attention_core core(default_cpu_context().exec(), iota(128));
    const double lp = plain.loss_and_grads(core);
    local_attention_core blocks(default_cpu_context().exec(), iota(128));
    blocks.reorder_keys(7);
    default_cpu_context().precision_state().set_floor_reorder(7);
    const double lr = reordered.loss_and_grads(blocks);
    default_cpu_context().precision_state().set_floor_reorder(0);
    EXPECT_NEAR(lr, lp, 1e-5);
    double worst = 0, largest = 0;
    for (std::size_t k = 0; k < plain.grads.size(); ++k) {
        worst =
            std::max(worst, static_cast<double>(std::fabs(reordered.grads[k] - plain.grads[k])));
        largest = std::max(largest, static_cast<double>(std::fabs(plain.grads[k])));
    }
    EXPECT_LT(worst, 1e-5 * largest);
    EXPECT_GT(worst, 0.0); // reordered, not the same sums
}

TEST(transformer, micro_batches_accumulate_to_the_whole_batch) {
    rig whole(tiny(), 2, 64);
    local_attention_core core(default_cpu_context().exec(), iota(64));
    const double loss = whole.loss_and_grads(core);
    // The same two sequences one at a time, each normalised by the 128 global tokens.
    rig one(tiny(), 1, 64);
    transformer model(one.cfg, one.shape, core);
    model.reserve();
    std::vector<float> grads(one.layout.total(), 0.0f);
    full_access access(one.layout, one.params.data(), grads.data());
    double sum = 0;
    for (int n = 0; n < 2; ++n) {
        sum += model.forward(access, whole.ids.data() + 64 * n, whole.targets.data() + 64 * n, 128,
                             one.timer);
        model.backward(access, one.timer);
    }
    EXPECT_NEAR(sum, loss, 1e-6);
    for (std::size_t k = 0; k < grads.size(); ++k)
        ASSERT_NEAR(grads[k], whole.grads[k], 1e-6 + 1e-5 * std::fabs(whole.grads[k])) << k;
}

TEST(transformer, profile_counts_every_operation_once_per_use_and_detaches) {
    rig r(tiny(), 2, 64);
    local_attention_core core(default_cpu_context().exec(), iota(64));
    train_context& ctx = default_cpu_context();
    op_profile prof;
    ctx.set_profile(&prof);
    const double loss = r.loss_and_grads(core);
    ctx.set_profile(nullptr);
    EXPECT_GT(loss, 0.0);
    const std::int64_t layers = r.cfg.layers;
    for (const op_kind k :
         {op_kind::norm1_fwd, op_kind::qkv_fwd, op_kind::attention_fwd, op_kind::out_proj_fwd,
          op_kind::norm2_fwd, op_kind::mlp_up_fwd, op_kind::gelu_fwd, op_kind::mlp_down_fwd,
          op_kind::mlp_down_bwd, op_kind::gelu_bwd, op_kind::mlp_up_bwd, op_kind::norm2_bwd,
          op_kind::out_proj_bwd, op_kind::attention_bwd, op_kind::qkv_bwd, op_kind::norm1_bwd})
        EXPECT_EQ(prof.calls(k), layers) << op_name(k);
    for (const op_kind k :
         {op_kind::residual_fwd, op_kind::residual_bwd, op_kind::layout_fwd, op_kind::layout_bwd})
        EXPECT_EQ(prof.calls(k), 2 * layers) << op_name(k);
    for (const op_kind k :
         {op_kind::embedding_fwd, op_kind::final_norm_fwd, op_kind::logits_fwd, op_kind::loss_fwd,
          op_kind::loss_bwd, op_kind::logits_bwd, op_kind::final_norm_bwd, op_kind::embedding_bwd})
        EXPECT_EQ(prof.calls(k), 1) << op_name(k);
    EXPECT_EQ(prof.calls(op_kind::optimizer), 0); // no AdamW step in a forward/backward
    // Detached: another pass adds nothing.
    const std::int64_t before = prof.calls(op_kind::qkv_fwd);
    r.loss_and_grads(core);
    EXPECT_EQ(prof.calls(op_kind::qkv_fwd), before);
}
