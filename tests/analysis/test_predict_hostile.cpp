// predict against hostile input: every --at value and hardware figure checked
// against its declared range before any arithmetic (an overflow is one line, never a wrapped
// P), the target count before expansion, the launch's own shape rules, and a step across a
// link level CALIB did not measure refused by name.
#include "analysis/predict/hardware.hpp"
#include "analysis/predict/target.hpp"
#include "analysis/predict/train.hpp"
#include "src/base/error.hpp"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <string>

using namespace ringscale::analysis::predict;

namespace {

/// Figures with compute `attn` s/FLOP only and one link level.
figures simple(double attn, double alpha, double beta) {
    figures f;
    f.compute = {attn, 0, 0, 0};
    f.links[0] = {alpha, beta};
    f.gpu = true; // width 1
    return f;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ringscale::config_error& e) {
        return e.what();
    }
    return "(no error)";
}

/// "name=1,2,...,n" for --at.
std::string values(const char* name, int n) {
    std::string s = std::string(name) + "=1";
    for (int i = 2; i <= n; ++i)
        s += "," + std::to_string(i);
    return s;
}

} // namespace

TEST(predict_hostile, at_values_are_checked_against_their_ranges_before_any_arithmetic) {
    EXPECT_EQ(message_of([] { parse_at("nodes=4611686018427387904,ranks_per_node=4"); }),
              "--at nodes: 4611686018427387904 is out of range (1 to 16777216 (2^24))");
    EXPECT_EQ(message_of([] { parse_at("P=18446744073709551615"); }),
              "--at world_size: 18446744073709551615 is out of range (1 to 16777216 (2^24))");
    for (const char* zero : {"heads", "head_dim", "batch", "hidden", "seq_len", "layers"})
        EXPECT_NE(message_of([&] {
                      parse_at(std::string(zero) + "=0");
                  }).find(std::string("--at ") + zero + ": 0 is out of range (1 to "),
                  std::string::npos)
            << zero;
    EXPECT_EQ(message_of([] { parse_at("seq_len=abc"); }),
              "--at seq_len: 'abc' is not a whole number");        // not "----at"
    EXPECT_EQ(parse_at("kv_heads=0,dp=0")[1].values.front(), "0"); // 0: heads, P / cp
    target tpl;
    tpl.job = "ring_attention";
    tpl.identity = {{"seq_len", "4096"}, {"layout", "zigzag"}};
    tpl.where = {2, 1, 2};
    EXPECT_EQ(message_of([&] {
                  expand_at({tpl}, parse_at("nodes=16777216,ranks_per_node=16777216"), nullptr);
              }),
              "--at: world_size 281474976710656 is beyond 2^24");
    // The count is refused as the values are read: 400 x 400 targets, not after expanding.
    EXPECT_NE(message_of([] {
                  parse_at(values("world_size", 400) + "," + values("ranks_per_node", 400));
              }).find("more than 100000 targets"),
              std::string::npos);
}

TEST(predict_hostile, hardware_figures_beyond_their_ranges_are_refused) {
    const std::string text = profile_text(builtin_h100());
    const auto with = [&](const std::string& key, const std::string& value) {
        const auto at = text.find(key + " =");
        return text.substr(0, at) + key + " = " + value + "\n" +
               text.substr(text.find('\n', at) + 1);
    };
    EXPECT_EQ(message_of([&] { parse_hardware(with("ranks_per_node", "3e9"), "f"); }),
              "hardware profile f: ranks_per_node = '3e9' is out of range (0 to 16777216)");
    EXPECT_EQ(message_of([&] { parse_hardware(with("ranks_per_node", "1e300"), "f"); }),
              "hardware profile f: ranks_per_node = '1e300' is out of range (0 to 16777216)");
    EXPECT_EQ(message_of([&] { parse_hardware(with("nics_per_node", "1e-300"), "f"); }),
              "hardware profile f: nics_per_node = '1e-300' is out of range (0.01 to 16777216)");
    EXPECT_EQ(message_of([&] { parse_hardware(with("efficiency", "1.5"), "f"); }),
              "hardware profile f: efficiency = '1.5' is out of range (0 to 1)");
    EXPECT_EQ(message_of([&] { parse_hardware(with("ranks_per_node", "2.5"), "f"); }),
              "hardware profile f: ranks_per_node = 2.5 is not whole");
}

// predict refuses what the launch would refuse, in the launch's words (the shared
// rules of src/base/shape_rules.hpp), and a step whose collectives cross a link level CALIB did
// not measure is refused by name, not priced as if that communication were free.
TEST(predict_hostile, shapes_the_launch_refuses_are_refused) {
    const figures f = simple(1e12, 1e-5, 1e9);
    target attn;
    attn.job = "ring_attention";
    attn.variant = "ring";
    attn.identity = {{"seq_len", "4096"}, {"layout", "zigzag"}, {"heads", "4"}, {"kv_heads", "4"}};
    attn.where = {2, 1, 2};
    ASSERT_TRUE(predict_target(attn, f).ok()) << predict_target(attn, f).refusal;
    const std::pair<const char*, const char*> bad[] = {
        {"kv_heads", "--heads 4 is not divisible by --kv-heads 3"},
        {"head_dim", "--head-dim: 96 is not supported (use 64 or 128)"},
        {"batch", "--batch: 0 is out of range"},
        {"seq_len", "zigzag layout needs seq_len divisible by 4, got seq_len=4098"}};
    const char* value[] = {"3", "96", "0", "4098"};
    for (std::size_t i = 0; i < std::size(bad); ++i) {
        target t = attn;
        t.identity[bad[i].first] = value[i];
        const step_prediction p = predict_target(t, f);
        EXPECT_NE(p.refusal.find(bad[i].second), std::string::npos) << p.refusal;
    }
    target train;
    train.job = "train_step";
    train.variant = "ddp";
    train.identity = {{"dp", "3"}, {"cp", "1"}};
    train.where = {2, 1, 2};
    EXPECT_NE(predict_target(train, f).refusal.find("--dp 3 x --cp 1 = 3, but the launch has 2"),
              std::string::npos)
        << predict_target(train, f).refusal;
    train.identity = {{"hidden", "500"}};
    EXPECT_NE(predict_target(train, f).refusal.find("--hidden 500 is not divisible by --heads 8"),
              std::string::npos)
        << predict_target(train, f).refusal;
}

TEST(predict_hostile, a_step_across_a_level_calib_did_not_measure_is_refused) {
    figures f = simple(1e-12, 1e-5, 1e9); // inside a node only
    f.compute.s_per_gemm_flop = 1e-12;
    f.links[1] = {NAN, NAN};
    target train;
    train.job = "train_step";
    train.variant = "ddp";
    train.where = {2, 1, 2}; // one node: priced
    ASSERT_TRUE(predict_target(train, f).ok()) << predict_target(train, f).refusal;
    for (const char* dp : {"ddp", "zero1", "fsdp"}) {
        train.identity["dp_variant"] = dp;
        train.where = {2, 2, 1}; // two nodes: the gradients cross a link CALIB never measured
        const step_prediction p = predict_target(train, f);
        EXPECT_FALSE(p.ok()) << dp << ": priced at " << p.time.total() << " s";
        EXPECT_NE(p.refusal.find("between nodes is not calibrated"), std::string::npos)
            << dp << ": " << p.refusal;
    }
}
