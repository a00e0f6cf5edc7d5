// The training step's model: flat parameter layout, the whole model's backward against
// central finite differences (every tensor of every unit, attention included), the fast
// attention core against the reference kernel inside the model, micro-batch accumulation,
// the BHSD transposes, and the single-rank reference trainer.
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/model/reference_train.hpp"
#include "kernels/model/transformer.hpp"
#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

model_config tiny() {
    model_config c;
    c.layers = 2;
    c.hidden = 64;
    c.heads = 1;
    c.vocab = 16;
    return c;
}

std::vector<std::int64_t> iota(std::int64_t n) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 0);
    return v;
}

// A model on `nseq` sequences of `rows` tokens, with its data and any attention core.
struct rig {
    model_config cfg;
    param_layout layout;
    batch_shape shape;
    std::vector<float> params, grads;
    std::vector<std::int32_t> ids, targets;
    phase_timer timer;

    rig(const model_config& c, std::int64_t nseq, std::int64_t rows)
        : cfg(c), layout(c), shape{nseq, rows}, params(layout.total()), grads(layout.total()),
          ids(static_cast<std::size_t>(nseq * rows)), targets(ids.size()) {
        init_params(cfg, layout, 3, params.data());
        // Perturb the norms and biases away from 1 and 0 so their gradients are generic.
        for (std::size_t k = 0; k < params.size(); ++k)
            params[k] += 0.05f * uniform_at(99, k);
        fill_batch(5, cfg.vocab, 0, nseq, iota(rows), ids.data(), targets.data());
    }
    double loss_and_grads(attention_core& core, bool with_grads = true) {
        transformer model(cfg, shape, core);
        model.reserve();
        std::fill(grads.begin(), grads.end(), 0.0f);
        full_access access(layout, params.data(), grads.data());
        const double loss = model.forward(access, ids.data(), targets.data(), ids.size(), timer);
        if (with_grads)
            model.backward(access, timer);
        return loss;
    }
};

struct tensor {
    const char* name;
    std::size_t offset, size;
};

std::vector<tensor> tensors_of(const model_config& cfg, const param_layout& l) {
    std::vector<tensor> out{{"embedding", 0, l.unit(0).size}};
    const block_offsets& b = l.block();
    const std::size_t h = static_cast<std::size_t>(cfg.hidden);
    const auto q = static_cast<std::size_t>(cfg.qkv_width());
    const auto up = static_cast<std::size_t>(cfg.ffn_up());
    const auto f = static_cast<std::size_t>(cfg.ffn_width());
    for (int k = 1; k <= cfg.layers; ++k) {
        const std::size_t u = l.unit(k).offset;
        for (tensor t : std::vector<tensor>{{"norm1", b.norm1, h},
                                            {"wqkv", b.wqkv, q * h},
                                            {"wo", b.wo, h * h},
                                            {"bo", b.bo, h},
                                            {"norm2", b.norm2, h},
                                            {"w1", b.w1, up * h},
                                            {"b1", b.b1, up},
                                            {"w2", b.w2, f * h},
                                            {"b2", b.b2, h}}) {
            t.offset += u;
            out.push_back(t);
        }
    }
    const std::size_t u = l.unit(l.head_unit()).offset;
    const head_offsets& hd = l.head();
    const auto v = static_cast<std::size_t>(cfg.vocab);
    out.push_back({"norm_f", u + hd.norm, h});
    out.push_back({"wout", u + hd.wout, v * h});
    out.push_back({"bout", u + hd.bout, v});
    return out;
}

// Attention through the reference kernel (double accumulation), one block.
class ref_core final : public attention_core {
  public:
    explicit ref_core(std::vector<std::int64_t> pos) : m_pos(std::move(pos)) {}
    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer&) override {
        reference::attention_fwd_ref(s, q, kv, kv + attention_kv_elems(s), m_pos.data(),
                                     m_pos.data(), o, lse);
    }
    void backward(const attention_shape& s, const float* q, const float* kv, const float*,
                  const float* d_o, const float*, float* dq, float* dkv, phase_timer&) override {
        const std::int64_t kve = attention_kv_elems(s);
        reference::attention_bwd_ref(s, q, kv, kv + kve, d_o, m_pos.data(), m_pos.data(), dq, dkv,
                                     dkv + kve);
    }

  private:
    std::vector<std::int64_t> m_pos;
};

} // namespace

TEST(model_params, flat_layout_is_contiguous_and_sized) {
    model_config c = tiny();
    c.hidden = 128;
    c.heads = 2;
    const param_layout l(c);
    ASSERT_EQ(l.units(), c.layers + 2);
    const std::size_t h = 128;
    EXPECT_EQ(l.block().size, 12 * h * h + 8 * h);
    EXPECT_EQ(l.unit(0).size, 16 * h);
    EXPECT_EQ(l.head().size, h + 16 * h + 16);
    std::size_t at = 0;
    for (int u = 0; u < l.units(); ++u) {
        EXPECT_EQ(l.unit(u).offset, at);
        at += l.unit(u).size;
    }
    EXPECT_EQ(at, l.total());
    EXPECT_EQ(l.max_unit(), l.block().size);
    const auto t = tensors_of(c, l);
    std::size_t sum = 0;
    for (const auto& x : t)
        sum += x.size;
    EXPECT_EQ(sum, l.total()); // the tensors tile the buffer
}

// Grouped-query attention (2 query heads on 1 K/V head) and a SwiGLU MLP of width 96.
model_config tiny_gqa_swiglu() {
    model_config c = tiny();
    c.hidden = 128;
    c.heads = 2;
    c.kv_heads = 1;
    c.ffn = 96;
    c.mlp = mlp_kind::swiglu;
    return c;
}

TEST(model_params, gqa_and_swiglu_layout_by_hand) {
    const model_config c = tiny_gqa_swiglu();
    const param_layout l(c);
    // norm1 128 + wqkv (128 + 2 x 64) x 128 + wo 128 x 128 + bo 128 + norm2 128
    // + w1 (2 x 96) x 128 + b1 192 + w2 128 x 96 + b2 128.
    EXPECT_EQ(l.block().size,
              128u + 256 * 128 + 128 * 128 + 128 + 128 + 192 * 128 + 192 + 128 * 96 + 128);
    EXPECT_EQ(l.block().wqkv, 128u);
    EXPECT_EQ(l.block().w2 - l.block().w1, 192u * 128 + 192);
    std::size_t sum = 0;
    for (const auto& x : tensors_of(c, l))
        sum += x.size;
    EXPECT_EQ(sum, l.total());
    EXPECT_EQ(c.kv_width(), 64);
    EXPECT_EQ(c.qkv_width(), 256);
    EXPECT_EQ(c.ffn_up(), 192);
}

TEST(model_params, bad_configs_are_refused) {
    {
        model_config c = tiny_gqa_swiglu();
        c.kv_heads = 3; // 2 query heads
        EXPECT_THROW(model_check(c), config_error);
        c.kv_heads = -1;
        EXPECT_THROW(model_check(c), config_error);
        c = tiny_gqa_swiglu();
        c.ffn = -4;
        EXPECT_THROW(model_check(c), config_error);
        EXPECT_NO_THROW(model_check(tiny_gqa_swiglu()));
        EXPECT_EQ(parse_mlp("swiglu"), mlp_kind::swiglu);
        EXPECT_THROW(parse_mlp("relu\x1b[2J"), config_error);
    }
    model_config c = tiny();
    c.heads = 3; // 64 / 3
    EXPECT_THROW(model_check(c), config_error);
    c = tiny();
    c.heads = 2; // head_dim 32
    EXPECT_THROW(model_check(c), config_error);
    c = tiny();
    c.layers = 0;
    EXPECT_THROW(model_check(c), config_error);
    EXPECT_NO_THROW(model_check(tiny()));
}

TEST(model_params, targets_are_the_next_token) {
    for (std::int64_t n = 0; n < 4; ++n)
        for (std::int64_t p = 0; p < 10; ++p) {
            EXPECT_EQ(target_at(1, 50, n, p), token_at(1, 50, n, p + 1));
            EXPECT_GE(token_at(1, 50, n, p), 0);
            EXPECT_LT(token_at(1, 50, n, p), 50);
        }
}

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
} // namespace

TEST(transformer, backward_matches_central_differences_for_every_tensor) {
    RecordProperty("max_abs_err", std::to_string(check_central_differences(tiny())));
}

TEST(transformer, backward_matches_central_differences_with_gqa_and_swiglu) {
    RecordProperty("max_abs_err", std::to_string(check_central_differences(tiny_gqa_swiglu())));
}

TEST(transformer, fast_attention_core_matches_reference_inside_the_model) {
    rig fast(tiny(), 2, 128), ref(tiny(), 2, 128);
    local_attention_core core(default_cpu_context().exec(), iota(128));
    ref_core oracle(iota(128));
    const double lf = fast.loss_and_grads(core), lr = ref.loss_and_grads(oracle);
    EXPECT_NEAR(lf, lr, 1e-5);
    double worst = 0;
    for (std::size_t k = 0; k < fast.grads.size(); ++k)
        worst = std::max(worst, static_cast<double>(std::fabs(fast.grads[k] - ref.grads[k])));
    EXPECT_LT(worst, 1e-5);
}

TEST(transformer, gqa_fast_attention_core_matches_reference_inside_the_model) {
    rig fast(tiny_gqa_swiglu(), 2, 128), ref(tiny_gqa_swiglu(), 2, 128);
    local_attention_core core(default_cpu_context().exec(), iota(128));
    ref_core oracle(iota(128));
    const double lf = fast.loss_and_grads(core), lr = ref.loss_and_grads(oracle);
    EXPECT_NEAR(lf, lr, 1e-5);
    double worst = 0;
    for (std::size_t k = 0; k < fast.grads.size(); ++k)
        worst = std::max(worst, static_cast<double>(std::fabs(fast.grads[k] - ref.grads[k])));
    EXPECT_LT(worst, 1e-5);
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

TEST(model_train, reference_training_lowers_the_loss_and_is_deterministic) {
    const model_config c = tiny();
    const param_layout l(c);
    std::vector<float> a(l.total()), b(l.total());
    init_params(c, l, 1, a.data());
    b = a;
    adamw_params hp;
    hp.lr = 3e-3f;
    const auto la = reference_train(c, 2, 2, 64, 5, hp, a.data());
    const auto lb = reference_train(c, 2, 2, 64, 5, hp, b.data());
    ASSERT_EQ(la.size(), 5u);
    EXPECT_LT(la.back(), la.front());
    EXPECT_EQ(la, lb);
    EXPECT_EQ(a, b);
}

TEST(transformer, the_reference_run_on_an_explicit_cpu_context_is_the_default_run) {
    model_config c;
    c.layers = 2;
    c.hidden = 128;
    c.heads = 2;
    c.vocab = 64;
    const param_layout layout(c);
    std::vector<float> a(layout.total()), b(layout.total()), ga(a.size()), gb(a.size());
    init_params(c, layout, 4, a.data());
    b = a;
    adamw_params hp;
    const auto la = reference_train(c, 3, 2, 64, 2, hp, a.data(), ga.data());
    const auto exec = make_executor(device_kind::cpu);
    train_context ctx(*exec, false);
    const auto lb = reference_train(c, 3, 2, 64, 2, hp, b.data(), gb.data(), ctx);
    EXPECT_EQ(la, lb);
    EXPECT_TRUE(same_bits(a, b));
    EXPECT_TRUE(same_bits(ga, gb));
}

// The single-rank core, through the executor's attention kernels on the CPU (fp32 inputs),
// against the CPU kernels called directly, forward and backward.
TEST(local_attention_core, on_the_cpu_executor_matches_the_cpu_kernels) {
    const auto exec = make_executor(device_kind::cpu);
    attention_shape s;
    s.batch = 2;
    s.heads = s.kv_heads = 2;
    s.q_len = s.k_len = 48;
    s.head_dim = 64;
    s.causal = true;
    std::vector<std::int64_t> pos(48);
    std::iota(pos.begin(), pos.end(), 0);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto q = seeded(qe, 11), kv = seeded(2 * qe, 12), d_o = seeded(qe, 13);
    cpu::attention_workspace ws;
    cpu::attention_workspace_reserve(ws);
    local_attention_core core(*exec, pos);
    std::vector<float> o1(qe), o2(qe), l1(qe / 64), l2(qe / 64), dq1(qe), dq2(qe), dkv1(2 * qe),
        dkv2(2 * qe);
    phase_timer timer;
    const std::int64_t kve = attention_kv_elems(s);
    cpu::attention_fwd_init(s, o1.data(), l1.data());
    cpu::attention_fwd_cpu(s, q.data(), kv.data(), kv.data() + kve, pos.data(), pos.data(),
                           o1.data(), l1.data(), ws);
    core.forward(s, q.data(), kv.data(), o2.data(), l2.data(), timer);
    std::vector<float> delta(qe / 64);
    cpu::attention_bwd_delta(s, o1.data(), d_o.data(), delta.data());
    std::fill(dq1.begin(), dq1.end(), 0.0f);
    std::fill(dkv1.begin(), dkv1.end(), 0.0f);
    cpu::attention_bwd_cpu(s, q.data(), kv.data(), kv.data() + kve, d_o.data(), l1.data(),
                           delta.data(), pos.data(), pos.data(), dq1.data(), dkv1.data(),
                           dkv1.data() + kve, ws);
    core.backward(s, q.data(), kv.data(), o2.data(), d_o.data(), l2.data(), dq2.data(), dkv2.data(),
                  timer);
    auto worst = [](const std::vector<float>& a, const std::vector<float>& b) {
        double e = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
            e = std::max(e, static_cast<double>(std::fabs(a[i] - b[i])));
        return e;
    };
    EXPECT_LE(worst(o1, o2), 1e-6);
    EXPECT_LE(worst(l1, l2), 1e-6);
    EXPECT_LE(worst(dq1, dq2), 1e-5);
    EXPECT_LE(worst(dkv1, dkv2), 1e-5);
    EXPECT_GT(timer.compute_s(), 0.0);
}
