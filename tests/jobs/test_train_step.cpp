// Planning rules of train_step (pure, no MPI), DDP bucket assignment, padding, the FLOP
// convention, and the validation's power to fail.
#include "jobs/registry.hpp"
#include "jobs/train_parallel.hpp"
#include "jobs/train_problem.hpp"
#include "jobs/train_validate.hpp"
#include "src/base/error.hpp"
#include "src/engine/sweep.hpp"

#include <gtest/gtest.h>

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
const job& train() {
    return find_job("train_step");
}
} // namespace

TEST(train_buckets, reverse_unit_order_contiguous_and_complete) {
    kernels::model_config c;
    c.layers = 4;
    c.hidden = 128;
    c.heads = 2;
    c.vocab = 64;
    const kernels::param_layout l(c);
    const double block_bytes = l.block().size * 4.0;
    const auto b = make_buckets(l, 2 * block_bytes); // head + 2 blocks reach the size
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(b.front().last_unit, l.head_unit());
    std::size_t end = l.total();
    int next_last = l.head_unit();
    for (const auto& k : b) {
        EXPECT_EQ(k.last_unit, next_last);
        EXPECT_EQ(k.offset + k.size, end); // contiguous, descending
        EXPECT_EQ(k.offset, l.unit(k.first_unit).offset);
        end = k.offset;
        next_last = k.first_unit - 1;
    }
    EXPECT_EQ(end, 0u);
    EXPECT_EQ(b.back().first_unit, 0);
    EXPECT_EQ(b.front().first_unit, l.head_unit() - 2); // head + 2 blocks
    EXPECT_EQ(make_buckets(l, 1.0).size(), static_cast<std::size_t>(l.units()));
    EXPECT_EQ(make_buckets(l, 1e12).size(), 1u);
    EXPECT_EQ(padded(10, 4), 12u);
    EXPECT_EQ(padded(12, 4), 12u);
}

TEST(train_plan, grid_variants_and_flops) {
    auto l = base();
    l["dp-variant"] = {"ddp", "zero1", "fsdp"};
    l["cp"] = {"2"};
    l["prefetch"] = {"on"};
    const auto cases = plan_job(train(), l, ranks(4));
    ASSERT_EQ(cases.size(), 3u);
    EXPECT_EQ(cases[0].variant, "ddp/cp-ring");
    EXPECT_EQ(cases[2].variant, "fsdp+prefetch/cp-ring");
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
    EXPECT_EQ(read_train_problem(plan_job(train(), l, ranks(2))[0].values, 2).global_tokens, 8192);
    // ZeRO-1 and FSDP state shrinks with the group; DDP's does not.
    const kernels::param_layout lay(pr.model);
    dp_settings s;
    const double ddp = dp_state_bytes(s, 4, lay);
    s.variant = "zero1";
    EXPECT_LT(dp_state_bytes(s, 4, lay), ddp);
    const double zero1 = dp_state_bytes(s, 4, lay);
    s.variant = "fsdp";
    EXPECT_LT(dp_state_bytes(s, 4, lay), zero1);
}

TEST(train_plan, bad_input_is_refused) {
    auto expect_refused = [](param_lists l, int p) {
        EXPECT_THROW(plan_job(train(), l, ranks(p)), config_error);
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
    EXPECT_GT(plan_job(train(), l, ranks(1)).at(0).bytes_per_rank, 8ull << 30);
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
