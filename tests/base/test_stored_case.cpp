// The one check of a case's data (src/base/stored_case.hpp), shared by ringscale-stats and
// --resume: each physics check names what is wrong, exactly; a sound case passes.
#include "src/base/stored_case.hpp"

#include <gtest/gtest.h>
#include <limits>

using namespace ringscale::stored;

namespace {

const double nan = std::numeric_limits<double>::quiet_NaN();

/// Two ranks, one warm-up and two timed rows, comm within the step, peaks per rank.
case_arrays sound_case() {
    case_arrays d;
    d.rows = 3;
    d.world = 2;
    d.is_warmup = {1, 0, 0};
    d.time_s = {1, 2, 3, 4, 5, 6};
    d.comm_wait_s = {0.5, 1, 1.5, 2, 2.5, 3};
    d.memory_bytes["peak_rss_bytes"] = {100, 200};
    d.threads = {4, 4};
    return d;
}

attr_map with(const char* name, double value) {
    return {{name, attr_value{std::to_string(value), value, false}}};
}

} // namespace

TEST(stored_case, a_sound_case_passes) {
    EXPECT_EQ(data_problem(sound_case(), with("world_size", 2), true), "");
    EXPECT_EQ(data_problem(sound_case(), with("busbw_factor", 0), true), ""); // P=1 allreduce
}

TEST(stored_case, comm_wait_above_the_step_is_refused) {
    auto d = sound_case();
    d.comm_wait_s[3] = 4 * 1.001 + 1e-6; // within the tolerance
    EXPECT_EQ(data_problem(d, {}, true), "");
    d.comm_wait_s[3] = 4 * 1000;
    EXPECT_EQ(data_problem(d, {}, true),
              "comm_wait_s [iteration 1, rank 1] is 4000 s, more than that step's time_s 4 s");
}

TEST(stored_case, memory_must_be_finite_non_negative_and_per_rank) {
    auto d = sound_case();
    d.memory_bytes["peak_rss_bytes"][1] = nan;
    EXPECT_EQ(data_problem(d, {}, true),
              "peak_rss_bytes [rank 1] is nan: it must be finite and >= 0");
    d = sound_case();
    d.memory_bytes["peak_host_bytes"] = {5};
    EXPECT_EQ(data_problem(d, {}, true), "peak_host_bytes has 1 values for 2 ranks");
    d = sound_case();
    d.threads = {4, -1};
    EXPECT_EQ(data_problem(d, {}, true), "threads [rank 1] is -1: it must be finite and >= 0");
}

TEST(stored_case, cpu_times_and_counts_are_not_negative_or_nan_where_not_measured) {
    auto d = sound_case();
    d.cpu["cpu_s"] = {0.5, 1, 1.5, 2, 2.5, 3};
    d.cpu["instructions"] = {nan, nan, nan, nan, nan, nan}; // counters not supported
    EXPECT_EQ(data_problem(d, {}, true), "");
    d.cpu["cpu_s"][4] = -1;
    EXPECT_EQ(data_problem(d, {}, true), "cpu_s [iteration 2, rank 0] is -1: it must be finite "
                                         "and >= 0 (or NaN: not measured)");
    d = sound_case();
    d.cpu["cycles"] = {1, 2, 3, 4, 5, std::numeric_limits<double>::infinity()};
    EXPECT_NE(data_problem(d, {}, true).find("cycles [iteration 2, rank 1] is inf"),
              std::string::npos);
}

TEST(stored_case, derived_factors_and_counts_are_not_negative) {
    EXPECT_EQ(data_problem(sound_case(), with("busbw_factor", -1.5), true),
              "busbw_factor is -1.5: it must be finite and >= 0");
    EXPECT_EQ(data_problem(sound_case(), with("bytes", nan), true),
              "bytes is nan: it must be finite and >= 0");
}

TEST(stored_case, warm_up_flags_world_size_and_timed_rows) {
    auto d = sound_case();
    d.is_warmup[2] = 2;
    EXPECT_EQ(data_problem(d, {}, true), "is_warmup[2] is 2: warm-up flags must be 0 or 1");
    EXPECT_EQ(data_problem(sound_case(), with("world_size", 4), true),
              "world_size is 4 but the timings have 2 rank columns");
    d = sound_case();
    d.is_warmup = {1, 1, 1};
    EXPECT_EQ(data_problem(d, {}, true), "no timed iteration (every row is warm-up)");
    EXPECT_EQ(data_problem(d, {}, false), ""); // a failed case may have no timed row
    d = sound_case();
    d.time_s[1] = nan;
    EXPECT_EQ(data_problem(d, {}, true),
              "time_s [iteration 0, rank 1] is nan: times must be finite and >= 0");
}

TEST(stored_case, warm_up_rows_from_the_attribute_or_not_at_all) {
    EXPECT_EQ(warmup_from_attribute(3, with("warmup", 2)), (std::vector<std::uint8_t>{1, 1, 0}));
    EXPECT_TRUE(warmup_from_attribute(3, with("warmup", 4)).empty());
    EXPECT_TRUE(warmup_from_attribute(3, with("warmup", 0.5)).empty());
    EXPECT_TRUE(warmup_from_attribute(3, {}).empty());
}

// The identity's topology agrees with itself, and enumerated values are ones a
// launch writes; each refusal names the value.
namespace {
attr_map identity(std::initializer_list<std::pair<const char*, double>> numbers,
                  std::initializer_list<std::pair<const char*, const char*>> texts = {}) {
    attr_map m;
    for (const auto& [name, v] : numbers)
        m[name] = attr_value{std::to_string(v), v, v == static_cast<long long>(v)};
    for (const auto& [name, t] : texts)
        m[name] = attr_value{t, std::nullopt, false};
    return m;
}
} // namespace

TEST(stored_case, topology_that_agrees_passes) {
    EXPECT_EQ(identity_problem({}), ""); // a file from before the topology: one node
    EXPECT_EQ(identity_problem(identity({{"world_size", 8}, {"nodes", 2}, {"ranks_per_node", 4}},
                                        {{"scope", "inter"}, {"shift", "node"}})),
              "");
    // 3 + 1 ranks on two nodes: the most on one node is 3.
    EXPECT_EQ(identity_problem(identity(
                  {{"world_size", 4}, {"nodes", 2}, {"ranks_per_node", 3}, {"uneven_nodes", 1}})),
              "");
    EXPECT_EQ(identity_problem(identity({{"world_size", 4}, {"shift", 3}})), "");
}

TEST(stored_case, topology_that_contradicts_itself_is_refused) {
    EXPECT_EQ(identity_problem(identity({{"world_size", 2}, {"nodes", 4}, {"ranks_per_node", 8}})),
              "nodes 4 x ranks_per_node 8 = 32, but world_size is 2");
    EXPECT_EQ(identity_problem(identity({{"world_size", 2}, {"nodes", -1}})),
              "nodes is -1: it must be a whole number from 1 to 2^24");
    EXPECT_EQ(identity_problem(identity({{"world_size", 2}, {"nodes", 0}})),
              "nodes is 0: it must be a whole number from 1 to 2^24");
    EXPECT_EQ(identity_problem(identity({{"world_size", 2}, {"nodes", nan}})),
              "nodes is nan: it must be a whole number from 1 to 2^24");
    EXPECT_EQ(identity_problem(identity({{"world_size", 2}, {"ranks_per_node", 1.5}})),
              "ranks_per_node is 1.5: it must be a whole number from 1 to 2^24");
    EXPECT_EQ(identity_problem(identity({{"world_size", 2}, {"nodes", 2}})),
              "nodes is given without ranks_per_node");
    // uneven: 2 nodes of at most 1 rank cannot hold 2 ranks unevenly (that is even).
    EXPECT_EQ(identity_problem(identity(
                  {{"world_size", 2}, {"nodes", 2}, {"ranks_per_node", 1}, {"uneven_nodes", 1}})),
              "uneven_nodes with nodes 2 and at most 1 ranks per node cannot hold world_size 2");
    EXPECT_EQ(identity_problem(identity({{"world_size", 4}, {"uneven_nodes", 2}})),
              "uneven_nodes is '2.000000': it is 1 when present");
}

TEST(stored_case, enumerated_values_must_be_ones_a_launch_writes) {
    EXPECT_EQ(identity_problem(identity({}, {{"scope", "bogus"}})),
              "scope is 'bogus': not one of world, intra, inter");
    EXPECT_EQ(identity_problem(identity({}, {{"device", "tpu"}})),
              "device is 'tpu': not one of cpu, cuda");
    EXPECT_EQ(identity_problem(identity({}, {{"ulysses_placement", "diagonal"}})),
              "ulysses_placement is 'diagonal': not one of node, across");
    EXPECT_EQ(identity_problem(identity({{"world_size", 4}, {"shift", -1}})),
              "shift is -1: a peer distance is a whole number from 1 to world_size - 1");
    EXPECT_EQ(identity_problem(identity({{"world_size", 4}, {"shift", 4}})),
              "shift is 4: a peer distance is a whole number from 1 to world_size - 1");
    EXPECT_EQ(identity_problem(identity({}, {{"shift", "far"}})),
              "shift is 'far': not a peer distance or 'node'");
}
