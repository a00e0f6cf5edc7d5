// Planning rules of train_step (pure, no MPI), DDP bucket assignment, padding, the FLOP
// convention, and the validation's power to fail; on a GPU: tests/jobs/test_train_step_device.
#include "jobs/registry.hpp"
#include "jobs/schemes/data_parallel.hpp"
#include "jobs/train_attention.hpp"
#include "jobs/train_problem.hpp"
#include "jobs/train_validate.hpp"
#include "kernels/model/transformer.hpp"
#include "src/base/error.hpp"
#include "src/engine/run_loop.hpp"
#include "src/engine/sweep.hpp"
#include "tests/support/thrown_by.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace ringscale;
using namespace ringscale::jobs;
using testing_support::thrown_by;

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
    // On one node a placement across nodes means nothing: refused.
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
