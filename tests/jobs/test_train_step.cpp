// Planning rules of train_step (pure, no MPI), DDP bucket assignment, padding, the FLOP
// convention, and the validation's power to fail.
#include "jobs/registry.hpp"
#include "jobs/schemes/data_parallel.hpp"
#include "jobs/train_attention.hpp"
#include "jobs/train_problem.hpp"
#include "jobs/train_validate.hpp"
#include "kernels/model/transformer.hpp"
#include "kernels/random.hpp"
#include "src/base/error.hpp"
#include "src/engine/run_loop.hpp"
#include "src/engine/sweep.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace ringscale;
using namespace ringscale::jobs;

namespace {
param_lists base() {
    param_lists l;
    for (const auto& o : train_options())
        l[o.name] = {o.default_value};
    return l;
}
launch_info ranks(int p) {
    launch_info l;
    l.world_size = p;
    l.host_bytes_per_rank = 8ull << 30;
    return l;
}
const job& train_job() {
    return find_job("train_step");
}
std::vector<float> seeded(std::size_t n, std::uint64_t seed) {
    std::vector<float> v(n);
    kernels::fill_uniform(v.data(), n, seed, 0);
    return v;
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

TEST(train_plan, grid_variants_and_flops) {
    auto l = base();
    l["dp-variant"] = {"ddp", "zero1", "fsdp"};
    l["cp"] = {"2"};
    l["prefetch"] = {"on"};
    const auto cases = plan_job(train_job(), l, ranks(4));
    ASSERT_EQ(cases.size(), 3u);
    EXPECT_EQ(cases[0].variant, "ddp/cp-ring");
    EXPECT_EQ(cases[2].variant, "fsdp+prefetch/cp-ring");
    l["cp-placement"] = {"across"}; // named, so the live table tells the placements apart
    launch_info two_nodes = ranks(4);
    two_nodes.nodes = comm::node_layout::blocks(2, 2);
    EXPECT_EQ(plan_job(train_job(), l, two_nodes)[0].variant, "ddp/cp-ring/across");
    // On one node a placement across nodes means nothing: refused (issue 35).
    EXPECT_THROW(plan_job(train_job(), l, ranks(4)), config_error);
    l["cp-placement"] = {"node"};
    EXPECT_EQ(cases[1].values.text("dp"), "0"); // as given: the identity; P resolves it
    EXPECT_EQ(read_train_problem(cases[1].values, 4).dp, 2);
    const auto pr = read_train_problem(cases[0].values, 4);
    EXPECT_EQ(pr.sequences, 8);
    EXPECT_EQ(pr.local_sequences(), 4);
    EXPECT_EQ(pr.local_rows(), 256);
    const double h = 512, dense = 4 * (12 * h * h + 8 * h) + h + 1024 * h + 1024;
    EXPECT_DOUBLE_EQ(pr.flops_per_step(), 6 * dense * 4096 + 12.0 * 4 * 8 * 512 * 512 * h / 2);
    EXPECT_FALSE(cases[0].validate_by_default); // 4 x 512 model: validation is opt-in
    l = base();
    l["scaling"] = {"weak"};
    EXPECT_EQ(read_train_problem(plan_job(train_job(), l, ranks(2))[0].values, 2).global_tokens,
              8192);
    // ZeRO-1 and FSDP state shrinks with the group; DDP's does not.
    const kernels::model::param_layout lay(pr.model);
    schemes::dp_settings s;
    const double ddp = schemes::dp_state_bytes(s, 4, lay);
    s.variant = "zero1";
    EXPECT_LT(schemes::dp_state_bytes(s, 4, lay), ddp);
    const double zero1 = schemes::dp_state_bytes(s, 4, lay);
    s.variant = "fsdp";
    EXPECT_LT(schemes::dp_state_bytes(s, 4, lay), zero1);
}

TEST(train_plan, bad_input_is_refused) {
    auto expect_refused = [](param_lists l, int p) {
        EXPECT_THROW(plan_job(train_job(), l, ranks(p)), config_error);
    };
    auto l = base();
    l["dp"] = {"3"}; // 3 x 1 != 4
    expect_refused(l, 4);
    l = base();
    l["cp"] = {"3"}; // does not divide 4
    expect_refused(l, 4);
    l = base();
    l["tokens"] = {"1536"}; // 3 sequences over 2 dp ranks
    expect_refused(l, 2);
    l = base();
    l["tokens"] = {"1000"}; // not whole sequences
    expect_refused(l, 1);
    l = base();
    l["heads"] = {"3"}; // 512 / 3
    expect_refused(l, 1);
    l = base();
    l["heads"] = {"16"}; // head dim 32
    expect_refused(l, 1);
    l = base();
    l["cp"] = {"2"};
    l["cp-variant"] = {"ulysses"};
    l["hidden"] = {"384"};
    l["heads"] = {"3"}; // head dim 128, but 3 heads do not split over 2 cp ranks
    expect_refused(l, 2);
    for (const char* u : {"3", "8"}) { // does not divide cp = 4; above it
        l = base();
        l["cp"] = {"4"};
        l["cp-variant"] = {"hybrid"};
        l["cp-ulysses-degree"] = {u};
        expect_refused(l, 4);
    }
    l = base();
    l["cp"] = {"4"};
    l["cp-variant"] = {"hybrid"};
    l["cp-ulysses-degree"] = {"4"};
    l["hidden"] = {"384"};
    l["heads"] = {"3"}; // 3 heads do not split over Ulysses groups of 4
    expect_refused(l, 4);
    l = base();
    l["cp"] = {"2"};
    l["train-seq-len"] = {"510"}; // zigzag needs 2*cp | seq
    l["tokens"] = {"1020"};
    expect_refused(l, 2);
    l = base();
    l["dp-variant"] = {"zero3"};
    expect_refused(l, 1);
    l = base();
    l["lr"] = {"0"};
    expect_refused(l, 1);
    l = base(); // the launcher's preflight refuses what does not fit (run_loop's test)
    l["layers"] = {"64"};
    l["hidden"] = {"8192"};
    l["heads"] = {"64"};
    EXPECT_GT(plan_job(train_job(), l, ranks(1)).at(0).bytes_per_rank, 8ull << 30);
}

TEST(train_validate, detects_wrong_gradients_and_parameters) {
    training_trace want;
    want.losses = {4.0, 3.5};
    want.first_grads = {0.1f, -0.2f, 0.05f};
    want.params = {1.0f, 2.0f, 3.0f};
    attr_map d;
    EXPECT_TRUE(compare_training(want, want, 1e-3, d).ok);
    auto got = want;
    for (auto& g : got.first_grads)
        g *= 0.5f; // averaged instead of summed over two ranks
    EXPECT_FALSE(compare_training(got, want, 1e-3, d).ok);
    got = want;
    got.params[1] += 2e-3f; // one missed AdamW step of lr 1e-3 ... twice
    EXPECT_FALSE(compare_training(got, want, 1e-3, d).ok);
    got = want;
    got.losses[1] += 1e-3;
    const auto v = compare_training(got, want, 1e-3, d);
    EXPECT_FALSE(v.ok);
    EXPECT_FALSE(v.detail.empty());
    EXPECT_GT(attr_number(d, "validate_loss_max_abs_err"), 9e-4);
}

namespace {
launch_config train_config(const std::string& cp, const std::string& tf32,
                           const std::string& cp_variant = "ring") {
    launch_config cfg;
    cfg.jobs = {"train_step"};
    for (const auto& o : train_options())
        cfg.params[o.name] = {o.default_value};
    cfg.params["cp"] = {cp};
    cfg.params["tf32"] = {tf32};
    cfg.params["cp-variant"] = {cp_variant};
    return cfg;
}
jobs::launch_info gpu_launch(int ranks, std::uint64_t device_bytes) {
    jobs::launch_info l;
    l.world_size = ranks;
    l.device = device_kind::cuda;
    l.comm = comm_kind::nccl;
    l.host_bytes_per_rank = 1ull << 40;
    l.device_bytes_per_rank = device_bytes;
    return l;
}
} // namespace

// Every context-parallel scheme runs on a GPU through the same code as on the CPU: each plans
// on cuda; --tf32 is refused on the CPU.
TEST(train_step_device_plan, every_cp_scheme_plans_on_cuda) {
    for (const char* variant : {"ring", "allgather", "ulysses", "hybrid"}) {
        const auto cases =
            plan_launch(train_config("2", "off", variant), gpu_launch(2, 1ull << 40));
        ASSERT_EQ(cases.size(), 1u) << variant;
        EXPECT_TRUE(cases[0].plan.skip_reason.empty()) << variant;
    }
    jobs::launch_info cpu = gpu_launch(2, 0);
    cpu.device = device_kind::cpu;
    cpu.comm = comm_kind::mpi;
    const std::string tf32 = thrown_by([&] { plan_launch(train_config("1", "on"), cpu); });
    EXPECT_NE(tf32.find("--tf32 on needs --device cuda"), std::string::npos) << tf32;
    // --profile on runs on both devices (CUDA events on a GPU).
    launch_config profiled = train_config("1", "off");
    profiled.params["profile"] = {"on"};
    EXPECT_EQ(plan_launch(profiled, gpu_launch(2, 1ull << 40)).size(), 1u);
    EXPECT_EQ(plan_launch(profiled, cpu).size(), 1u);
}

// --numerics runs on a GPU too: its same-dtype reference and floor runs (one at a time, on the
// whole batch, with the floor's reordered rows) add their device memory to the estimate, and a
// device that cannot hold them skips the case; the dtype's own GPU rules still refuse.
TEST(train_step_device_plan, numerics_plans_on_cuda_with_its_runs_in_the_estimate) {
    launch_config cfg = train_config("1", "off");
    cfg.params["numerics"] = {"5"};
    cfg.params["dtype"] = {"bf16"};
    for (int ranks : {1, 2}) {
        const auto cases = plan_launch(cfg, gpu_launch(ranks, 1ull << 40));
        ASSERT_EQ(cases.size(), 1u) << ranks;
        EXPECT_TRUE(cases[0].plan.skip_reason.empty()) << cases[0].plan.skip_reason;
    }
    const auto fits = plan_launch(cfg, gpu_launch(1, 1ull << 40));
    const jobs::train_problem pr = jobs::read_train_problem(fits[0].plan.values, 1);
    const std::uint64_t need = fits[0].plan.bytes_per_rank;
    EXPECT_EQ(need, pr.device_bytes_per_rank(fits[0].plan.validate_by_default));
    // Beyond the run's own: a single-rank run's parameters, gradients and AdamW moments and its
    // activations for the whole batch.
    jobs::train_problem plain = pr;
    plain.numerics_steps = 0;
    const double one_run =
        4.0 * (4.0 * static_cast<double>(kernels::model::param_layout(pr.model).total()) +
               static_cast<double>(kernels::model::transformer::activation_floats(
                   pr.model, {pr.sequences, pr.seq_len})));
    EXPECT_GE(static_cast<double>(need),
              static_cast<double>(plain.device_bytes_per_rank(false)) + one_run);
    const auto skipped = plan_launch(cfg, gpu_launch(1, need - 1));
    EXPECT_NE(skipped[0].plan.skip_reason.find("of device memory per rank, device has"),
              std::string::npos)
        << skipped[0].plan.skip_reason;
    cfg.params["dtype"] = {"fp8"};
    jobs::launch_info ampere = gpu_launch(1, 1ull << 40);
    ampere.gpu_cc_major = 8;
    const std::string fp8 = thrown_by([&] { plan_launch(cfg, ampere); });
    EXPECT_NE(fp8.find("--dtype fp8 on the GPU needs Hopper"), std::string::npos) << fp8;
}

// The hybrid's degree: automatic (the largest u dividing cp and the heads with u*u <= cp), or
// the user's; it names the case, and shapes nothing (is no identity) for the other schemes.
TEST(train_plan, hybrid_degree_is_resolved_and_named) {
    auto l = base();
    l["cp"] = {"4"};
    l["cp-variant"] = {"hybrid"};
    auto cases = plan_job(train_job(), l, ranks(4));
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0].variant, "ddp/cp-hybrid/u2");
    EXPECT_EQ(read_train_problem(cases[0].values, 4).cp_ulysses_degree, 2);
    l["cp-ulysses-degree"] = {"4"};
    EXPECT_EQ(plan_job(train_job(), l, ranks(4)).at(0).variant, "ddp/cp-hybrid/u4");
    l["cp-variant"] = {"ring"};
    l["cp-ulysses-degree"] = {"1", "2"}; // the same ring case twice: planned once
    cases = plan_job(train_job(), l, ranks(4));
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_FALSE(cases[0].values.has("cp-ulysses-degree"));
    l["cp-variant"] = {"ulysses"};
    EXPECT_EQ(
        read_train_problem(plan_job(train_job(), l, ranks(4)).at(0).values, 4).cp_ulysses_degree,
        4);
}

// Packed documents plan on a GPU (the masked CUDA kernels passed on an H200,
// tests/gpu/RESULTS.md) as on the CPU: one case each.
TEST(train_step_device_plan, packed_documents_plan_on_cuda) {
    launch_config cfg = train_config("1", "off");
    cfg.params["docs"] = {"fixed:128"};
    const auto on_gpu = plan_launch(cfg, gpu_launch(1, 1ull << 40));
    ASSERT_EQ(on_gpu.size(), 1u);
    EXPECT_TRUE(on_gpu[0].plan.skip_reason.empty()) << on_gpu[0].plan.skip_reason;
    EXPECT_GT(on_gpu[0].plan.bytes_per_rank, 0u);
    jobs::launch_info cpu = gpu_launch(1, 0);
    cpu.device = device_kind::cpu;
    cpu.comm = comm_kind::mpi;
    EXPECT_EQ(plan_launch(cfg, cpu).size(), 1u);
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
    EXPECT_GT(need, 5u * 4u * kernels::model::param_layout(pr.model).total());
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
    // A task learnt fast: the loss bound follows step 1's loss (1e-4 * 3.6), not 0.29's.
    want.losses = {3.6, 0.86, 0.29};
    got = want;
    got.losses[2] += 2.2e-4;
    EXPECT_TRUE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
    EXPECT_FALSE(jobs::compare_training(got, want, lr, d).ok); // the CPU's fp32: 1e-5 of l_ref
    got.losses[2] = 0.29 + 4e-4;                               // past 1e-4 of step 1's loss
    EXPECT_FALSE(jobs::compare_training(got, want, lr, dev_tol, d).ok);
}

// --dtype bf16|fp16|fp8 on the GPU: bf16 and fp16 plan from compute capability 8.0, fp8 on
// Hopper only; a GPU without them, or an fp8 shape cuBLASLt's fp8 GEMMs do not take, is one
// line (the launcher's exit 2) before any work.
TEST(train_step_device_plan, mixed_precision_on_cuda_plans_where_the_gpu_runs_it) {
    auto on = [](int major, int minor) {
        jobs::launch_info l = gpu_launch(1, 1ull << 40);
        l.gpu_cc_major = major;
        l.gpu_cc_minor = minor;
        return l;
    };
    for (const char* dtype : {"bf16", "fp16", "fp8"}) {
        launch_config cfg = train_config("1", "off");
        cfg.params["dtype"] = {dtype};
        const auto cases = plan_launch(cfg, on(9, 0));
        ASSERT_EQ(cases.size(), 1u) << dtype;
        EXPECT_TRUE(cases[0].plan.skip_reason.empty()) << dtype;
        const bool fp8 = std::string(dtype) == "fp8";
        const std::string why = fp8 ? thrown_by([&] { plan_launch(cfg, on(8, 0)); }) : "";
        if (fp8) {
            EXPECT_NE(why.find("--dtype fp8 on the GPU needs Hopper"), std::string::npos) << why;
            EXPECT_NE(why.find("(this GPU is 8.0)"), std::string::npos) << why;
            EXPECT_EQ(why.find('\n'), std::string::npos) << why;
        } else {
            EXPECT_EQ(plan_launch(cfg, on(8, 0)).size(), 1u) << dtype;
        }
        const std::string old = thrown_by([&] { plan_launch(cfg, on(7, 5)); });
        EXPECT_NE(old.find("compute capability 8.0 or newer (this one is 7.5)"), std::string::npos)
            << old;
    }
}

// fp8's GEMMs take cuBLASLt's fp8 form: every width and the rows a rank holds multiples of 16.
TEST(train_step_device_plan, fp8_shapes_outside_the_fp8_gemms_are_refused_with_one_line) {
    launch_config cfg = train_config("1", "off");
    cfg.params["dtype"] = {"fp8"};
    cfg.params["vocab"] = {"1000"}; // the logits GEMM's n
    jobs::launch_info l = gpu_launch(1, 1ull << 40);
    l.gpu_cc_major = 9;
    std::string why = thrown_by([&] { plan_launch(cfg, l); });
    EXPECT_NE(why.find("the logits GEMM"), std::string::npos) << why;
    EXPECT_NE(why.find("multiples of 16"), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    cfg.params["dtype"] = {"bf16"}; // bf16 takes any shape
    EXPECT_EQ(plan_launch(cfg, l).size(), 1u);
    cfg.params["dtype"] = {"fp8"};
    cfg.params["vocab"] = {"1024"};
    cfg.params["train-seq-len"] = {"264"}; // 264 rows a rank: the weight gradients' k
    cfg.params["tokens"] = {"2112"};
    why = thrown_by([&] { plan_launch(cfg, l); });
    EXPECT_NE(why.find("264 rows"), std::string::npos) << why;
}

// The new model options join a case's identity only where they shape it, so the cases of
// files written before them keep theirs; bad values are one line each.
TEST(train_plan, model_shape_options_join_the_identity_when_set) {
    auto l = base();
    auto plain = plan_job(train_job(), l, ranks(1)).at(0).values;
    for (const char* k : {"kv-heads", "ffn", "mlp"})
        EXPECT_FALSE(plain.has(k)) << k;
    l["hidden"] = {"256"};
    l["heads"] = {"4"};
    l["kv-heads"] = {"2"};
    l["ffn"] = {"384"};
    l["mlp"] = {"swiglu"};
    const auto set = plan_job(train_job(), l, ranks(1)).at(0).values;
    for (const char* k : {"kv-heads", "ffn", "mlp"})
        EXPECT_TRUE(set.has(k)) << k;
    const train_problem pr = read_train_problem(set, 1);
    EXPECT_EQ(pr.model.kv_count(), 2);
    EXPECT_EQ(pr.model.ffn_width(), 384);
    EXPECT_EQ(pr.model.mlp, kernels::model::mlp_kind::swiglu);
    l["kv-heads"] = {"3"}; // does not divide 4 heads
    std::string why = thrown_by([&] { plan_job(train_job(), l, ranks(1)); });
    EXPECT_NE(why.find("--heads 4 is not divisible by --kv-heads 3"), std::string::npos) << why;
    l["kv-heads"] = {"1"}; // Ulysses over 2 ranks cannot split 1 K/V head
    l["cp"] = {"2"};
    l["cp-variant"] = {"ulysses"};
    why = thrown_by([&] { plan_job(train_job(), l, ranks(2)); });
    EXPECT_NE(why.find("K/V heads (1) must be divisible by cp (2)"), std::string::npos) << why;
    l["cp-variant"] = {"ring"}; // the ring takes any K/V head count
    EXPECT_EQ(plan_job(train_job(), l, ranks(2)).size(), 1u);
    l = base();
    l["mlp"] = {"relu"};
    EXPECT_THROW(plan_job(train_job(), l, ranks(1)), config_error);
}

// The cp schemes' buffers in the preflight: the ring's and the all-gather's K/V at the K/V
// heads' width, by hand for 8 heads on 2 K/V heads (K/V 64 of 256 features, 32 rows a rank);
// without GQA the same as at the hidden width; Ulysses at the hidden width.
TEST(train_plan, cp_buffers_count_kv_at_the_kv_heads_width) {
    kernels::model::model_config m;
    m.hidden = 256;
    m.heads = 8;
    m.kv_heads = 2;
    EXPECT_EQ(jobs::train_cp_floats("ring", 2, 1, 32, m), 8.0 * 32 * 64 + 32);
    EXPECT_EQ(jobs::train_cp_floats("allgather", 4, 1, 32, m),
              2.0 * 4 * 32 * 64 + 6 * 32 * 64 + 32);
    EXPECT_EQ(jobs::train_cp_floats("ulysses", 2, 2, 32, m), 17.0 * 32 * 256);
    EXPECT_EQ(jobs::train_cp_floats("hybrid", 4, 2, 32, m), 17.0 * 32 * 256 + 8 * 32 * 64 + 32);
    EXPECT_EQ(jobs::train_cp_floats("ring", 1, 1, 32, m), 32.0);
    m.kv_heads = 0; // every head a K/V head: the hidden width
    EXPECT_EQ(jobs::train_cp_floats("ring", 2, 1, 32, m), 8.0 * 32 * 256 + 32);
}
