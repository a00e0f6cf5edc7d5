#include "jobs/collectives_ops.hpp"
#include "jobs/registry.hpp"
#include "src/error.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::jobs;

namespace {
param_lists lists(const std::string& op, const std::string& lo, const std::string& hi,
                  const std::string& f = "2") {
    return {{"op", {op}},
            {"min-bytes", {lo}},
            {"max-bytes", {hi}},
            {"step-factor", {f}},
            {"root", {"0"}}};
}
launch_info world(int p) {
    launch_info l;
    l.world_size = p;
    l.host_bytes_per_rank = 1ull << 30;
    return l;
}
} // namespace

TEST(collectives_plan, sizes_like_nccl_tests) {
    const auto& j = find_job("collectives");
    auto cases = j.plan(lists("allreduce", "1K", "16K", "4"), world(2));
    ASSERT_EQ(cases.size(), 3u); // 1K, 4K, 16K
    EXPECT_EQ(cases[2].values.text("requested_bytes"), "16384");
    EXPECT_EQ(cases[2].bytes_per_rank, 2u * 16384u);
    EXPECT_EQ(j.plan(lists("all", "1K", "1K"), world(4)).size(), all_ops().size());
}

TEST(collectives_plan, bad_input) {
    const auto& j = find_job("collectives");
    EXPECT_THROW(j.plan(lists("allreduce", "2K", "1K"), world(2)), config_error);
    EXPECT_THROW(j.plan(lists("allreduce", "1K", "2K", "1"), world(2)), config_error);
    EXPECT_THROW(j.plan(lists("allreduce", "0", "2K"), world(2)), config_error);
    EXPECT_THROW(j.plan(lists("allreduce", "-5", "2K"), world(2)), config_error);
    EXPECT_THROW(j.plan(lists("gossip", "1K", "2K"), world(2)), config_error);
    auto l = lists("broadcast", "1K", "2K");
    l["root"] = {"4"};
    EXPECT_THROW(j.plan(l, world(4)), config_error);
}

TEST(collectives_plan, tiny_messages_are_skipped_not_failed) {
    const auto& j = find_job("collectives");
    auto cases = j.plan(lists("allgather", "8", "8"), world(4)); // 2 floats over 4 ranks
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_TRUE(cases[0].skippable);
    EXPECT_FALSE(cases[0].skip_reason.empty());
}

TEST(collectives_ops, busbw_factors) {
    EXPECT_DOUBLE_EQ(find_op("allreduce").busbw_factor(4), 1.5);
    EXPECT_DOUBLE_EQ(find_op("allgather").busbw_factor(4), 0.75);
    EXPECT_DOUBLE_EQ(find_op("reduce_scatter").busbw_factor(8), 0.875);
    EXPECT_DOUBLE_EQ(find_op("alltoall").busbw_factor(2), 0.5);
    EXPECT_DOUBLE_EQ(find_op("sendrecv").busbw_factor(4), 1.0);
}

TEST(collectives_ops, checks_catch_wrong_elements) {
    // A correct allgather output at P=3 passes; one corrupted element is counted.
    const auto& op = find_op("allgather");
    const auto sz = op.sizes(3 * 4 * 16, 3);
    ASSERT_EQ(sz.count, 16u);
    std::vector<float> out(sz.recv_count);
    for (int q = 0; q < 3; ++q)
        for (std::size_t i = 0; i < sz.count; ++i)
            out[q * sz.count + i] = collective_value(q, i);
    EXPECT_EQ(op.count_wrong(1, 3, out.data(), sz, 0), 0u);
    out[20] += 1;
    EXPECT_EQ(op.count_wrong(1, 3, out.data(), sz, 0), 1u);
    const auto& ar = find_op("allreduce");
    const auto asz = ar.sizes(64, 2);
    std::vector<float> zero(asz.recv_count, 0.0f);
    EXPECT_GT(ar.count_wrong(0, 2, zero.data(), asz, 0), 0u);
}

TEST(collectives_ops, values_are_exact_small_integers) {
    for (int r = 0; r < 5; ++r)
        for (std::size_t i = 0; i < 3000; i += 7) {
            const float v = collective_value(r, i);
            EXPECT_EQ(v, static_cast<float>(static_cast<int>(v)));
            EXPECT_LE(std::abs(v), 50.0f);
        }
}
