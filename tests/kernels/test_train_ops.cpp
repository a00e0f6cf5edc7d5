// The training backend's dispatch (kernels/train_ops): which backend a device gets, the
// refusals (--tf32 on the CPU, CUDA where it is not compiled, cp > 1 on cuda), the CPU backend
// computing bit for bit what the CPU kernels compute, the device attention core on the CPU
// device against the CPU core, and the train_step's device-memory plan. No GPU needed.
#include "jobs/registry.hpp"
#include "jobs/train_problem.hpp"
#include "jobs/train_validate.hpp"
#include "kernels/cross_entropy.hpp"
#include "kernels/embedding.hpp"
#include "kernels/gelu.hpp"
#include "kernels/model_train.hpp"
#include "kernels/random.hpp"
#include "kernels/rmsnorm.hpp"
#include "kernels/transformer.hpp"
#include "src/base/error.hpp"
#include "src/engine/run_loop.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

using namespace ringscale;
using namespace ringscale::kernels;

namespace {

std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string thrown_by(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(train_ops, the_cpu_device_gets_the_cpu_backend_and_tf32_is_refused_there) {
    const auto dev = make_cpu_device();
    const auto ops = make_train_ops(*dev, false);
    EXPECT_EQ(&ops->dev(), dev.get());
    EXPECT_NE(ops->precision().find("fp32"), std::string::npos) << ops->precision();
    EXPECT_THROW(make_train_ops(*dev, true), config_error);
    EXPECT_NE(thrown_by([&] { make_train_ops(*dev, true); }).find("--tf32 on needs --device cuda"),
              std::string::npos);
    EXPECT_EQ(&default_cpu_train_ops().dev(), &default_cpu_train_ops().dev()); // one instance
}

TEST(train_ops, the_cuda_backend_is_not_compiled_into_a_cpu_only_build) {
    if (cuda_compiled())
        GTEST_SKIP() << "this build has CUDA: the not-compiled stub is checked by the "
                        "-DRINGSCALE_ENABLE_CUDA=OFF build";
    const auto dev = make_cpu_device();
    EXPECT_THROW(make_cuda_train_ops(*dev, false), not_compiled_error);
}

TEST(train_ops, the_cpu_backend_computes_what_the_cpu_kernels_compute_bit_for_bit) {
    train_ops& ops = default_cpu_train_ops();
    const std::size_t t = 24, h = 64, v = 40;
    const auto x = seeded(t * h, 1), w = seeded(3 * h * h, 2, 0.1f), b = seeded(3 * h, 3);
    const auto gamma = seeded(h, 4), table = seeded(v * h, 5), dy = seeded(3 * t * h, 6);
    std::vector<std::int32_t> ids(t), targets(t);
    for (std::size_t i = 0; i < t; ++i) {
        ids[i] = static_cast<std::int32_t>((7 * i + 3) % v);
        targets[i] = static_cast<std::int32_t>((5 * i + 1) % v);
    }
    auto both = [](auto direct, auto through, std::size_t n, const char* what) {
        std::vector<float> a(n, 0.5f), c(n, 0.5f);
        direct(a.data());
        through(c.data());
        EXPECT_TRUE(same_bits(a, c)) << what;
    };
    both([&](float* o) { embedding_fwd(t, v, h, table.data(), ids.data(), o); },
         [&](float* o) { ops.embedding_fwd(t, v, h, table.data(), ids.data(), o); }, t * h, "emb");
    both([&](float* o) { embedding_bwd(t, v, h, ids.data(), x.data(), o); },
         [&](float* o) { ops.embedding_bwd(t, v, h, ids.data(), x.data(), o); }, v * h, "demb");
    std::vector<float> inv(t);
    both([&](float* o) { rmsnorm_fwd(t, h, 1e-5f, x.data(), gamma.data(), o, inv.data()); },
         [&](float* o) { ops.rmsnorm_fwd(t, h, 1e-5f, x.data(), gamma.data(), o, inv.data()); },
         t * h, "norm");
    both(
        [&](float* o) {
            linear_fwd({t, h, 3 * h}, x.data(), w.data(), b.data(), o);
        },
        [&](float* o) {
            ops.linear_fwd({t, h, 3 * h}, x.data(), w.data(), b.data(), o);
        },
        t * 3 * h, "linear");
    both(
        [&](float* o) {
            linear_bwd({t, h, 3 * h}, x.data(), w.data(), dy.data(), nullptr, o, nullptr);
        },
        [&](float* o) {
            ops.linear_bwd({t, h, 3 * h}, x.data(), w.data(), dy.data(), nullptr, o, nullptr);
        },
        3 * h * h, "dW");
    both([&](float* o) { gelu_fwd(t * h, x.data(), o); },
         [&](float* o) { ops.gelu_fwd(t * h, x.data(), o); }, t * h, "gelu");
    both(
        [&](float* o) {
            to_bhsd({2, 12}, 2, 32, dy.data(), 3 * h, h, o);
        },
        [&](float* o) {
            ops.to_bhsd({2, 12}, 2, 32, dy.data(), 3 * h, h, o);
        },
        t * h, "bhsd");
    const auto logits = seeded(t * v, 7, 3.0f);
    EXPECT_EQ(cross_entropy_fwd(t, v, 2 * t, logits.data(), targets.data()),
              ops.cross_entropy_fwd(t, v, 2 * t, logits.data(), targets.data()));
    both([&](float* o) { cross_entropy_bwd(t, v, 2 * t, logits.data(), targets.data(), o); },
         [&](float* o) { ops.cross_entropy_bwd(t, v, 2 * t, logits.data(), targets.data(), o); },
         t * v, "dlogits");
    adamw_params hp;
    std::vector<float> p1 = x, m1(x.size(), 0.1f), v1(x.size(), 0.2f);
    std::vector<float> p2 = p1, m2 = m1, v2 = v1;
    adamw_step(hp, 2, x.size(), p1.data(), dy.data(), m1.data(), v1.data());
    ops.adamw_step(hp, 2, x.size(), p2.data(), dy.data(), m2.data(), v2.data());
    EXPECT_TRUE(same_bits(p1, p2) && same_bits(m1, m2) && same_bits(v1, v2));
}

TEST(train_ops, the_reference_run_through_an_explicit_cpu_backend_is_the_default_run) {
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
    const auto dev = make_cpu_device();
    const auto ops = make_train_ops(*dev, false);
    const auto lb = reference_train(c, 3, 2, 64, 2, hp, b.data(), gb.data(), *ops);
    EXPECT_EQ(la, lb);
    EXPECT_TRUE(same_bits(a, b));
    EXPECT_TRUE(same_bits(ga, gb));
}

// The core the CUDA backend uses, run on the CPU device with fp32 inputs: the same attention
// as the CPU core, forward and backward.
TEST(device_attention_core, on_the_cpu_device_matches_the_cpu_core) {
    const auto dev = make_cpu_device();
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
    local_attention_core cpu(pos);
    device_attention_core devc(*dev, pos, elem::f32);
    std::vector<float> o1(qe), o2(qe), l1(qe / 64), l2(qe / 64), dq1(qe), dq2(qe), dkv1(2 * qe),
        dkv2(2 * qe);
    phase_timer timer;
    cpu.forward(s, q.data(), kv.data(), o1.data(), l1.data(), timer);
    devc.forward(s, q.data(), kv.data(), o2.data(), l2.data(), timer);
    cpu.backward(s, q.data(), kv.data(), o1.data(), d_o.data(), l1.data(), dq1.data(), dkv1.data(),
                 timer);
    devc.backward(s, q.data(), kv.data(), o2.data(), d_o.data(), l2.data(), dq2.data(), dkv2.data(),
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

namespace {
launch_config train_config(const std::string& cp, const std::string& tf32,
                           const std::string& cp_variant = "ring") {
    launch_config cfg;
    cfg.jobs = {"train_step"};
    for (const auto& o : jobs::train_options())
        cfg.params[o.name] = {o.default_value};
    cfg.params["cp"] = {cp};
    cfg.params["tf32"] = {tf32};
    cfg.params["cp-variant"] = {cp_variant};
    return cfg;
}
jobs::launch_info gpu_launch(int ranks, std::uint64_t device_bytes) {
    jobs::launch_info l;
    l.world_size = ranks;
    l.device = "cuda";
    l.comm = "nccl";
    l.host_bytes_per_rank = 1ull << 40;
    l.device_bytes_per_rank = device_bytes;
    return l;
}
} // namespace

TEST(train_step_device_plan, only_the_ring_cp_core_runs_on_cuda_the_others_are_refused) {
    for (const char* variant : {"allgather", "ulysses"}) {
        const std::string why = thrown_by(
            [&] { plan_launch(train_config("2", "off", variant), gpu_launch(2, 1ull << 40)); });
        EXPECT_NE(why.find(std::string("--cp-variant ") + variant + " on --device cuda"),
                  std::string::npos)
            << why;
        EXPECT_NE(why.find("--cp-variant ring or --cp 1"), std::string::npos) << why;
        EXPECT_EQ(why.find('\n'), std::string::npos);
    }
    EXPECT_EQ(plan_launch(train_config("2", "off", "ring"), gpu_launch(2, 1ull << 40)).size(), 1u);
    jobs::launch_info cpu = gpu_launch(2, 0);
    cpu.device = "cpu";
    cpu.comm = "mpi";
    EXPECT_EQ(plan_launch(train_config("2", "off", "ulysses"), cpu).size(), 1u); // fine on CPU
    const std::string tf32 = thrown_by([&] { plan_launch(train_config("1", "on"), cpu); });
    EXPECT_NE(tf32.find("--tf32 on needs --device cuda"), std::string::npos) << tf32;
}

TEST(train_step_device_plan, the_device_estimate_skips_a_case_that_cannot_fit) {
    const auto fits = plan_launch(train_config("1", "on"), gpu_launch(1, 1ull << 40));
    ASSERT_EQ(fits.size(), 1u);
    EXPECT_TRUE(fits[0].plan.skip_reason.empty()) << fits[0].plan.skip_reason;
    const std::uint64_t need = fits[0].plan.bytes_per_rank;
    // The default model (4 x 512, 4096 tokens, validated): state, activations and the
    // reference's on the device, well above its 17 MiB of fp32 parameters.
    const jobs::train_problem pr = jobs::read_train_problem(fits[0].plan.values, 1);
    EXPECT_EQ(need, pr.device_bytes_per_rank(fits[0].plan.validate_by_default));
    EXPECT_GT(need, pr.device_bytes_per_rank(false));
    EXPECT_GT(need, 5u * 4u * kernels::param_layout(pr.model).total());
    const auto skipped = plan_launch(train_config("1", "off"), gpu_launch(1, need - 1));
    EXPECT_NE(skipped[0].plan.skip_reason.find("of device memory per rank, device has"),
              std::string::npos)
        << skipped[0].plan.skip_reason;
}

// The GPU tolerances: a few noise-level outliers among the parameters pass, a whole unit's
// missed update, a NaN, or a halved gradient do not; the CPU check allows no outlier.
TEST(train_validate_device, allows_rare_outliers_but_not_a_missed_unit_update) {
    const double lr = 1e-3;
    jobs::training_trace want;
    want.losses = {4.0, 3.5, 3.2};
    want.first_grads = seeded(4000, 21);
    want.params = seeded(4000, 22);
    const auto dev_tol = jobs::training_tolerance::device();
    jobs::attr_map d;
    EXPECT_TRUE(jobs::compare_training(want, want, lr, dev_tol, d).ok);
    auto got = want;
    for (std::size_t i : {7u, 1999u, 3001u}) // 3 of 4000 < 0.1%: Adam sign flips
        got.params[i] += static_cast<float>(2 * lr * 3);
    EXPECT_TRUE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    EXPECT_EQ(jobs::attr_number(d, "validate_param_outliers"), 3);
    EXPECT_FALSE(jobs::compare_training(got, want, lr, d).ok); // the CPU allows none
    got = want;
    for (std::size_t i = 1000; i < 1400; ++i) // a 400-element unit missed every update
        got.params[i] += static_cast<float>(lr * 3);
    EXPECT_FALSE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    got = want;
    got.params[5] = NAN;
    EXPECT_FALSE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    got = want;
    for (auto& g : got.first_grads)
        g *= 0.5f; // averaged instead of summed over two ranks
    EXPECT_FALSE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
}
