// One live table for every job (src/launcher/live_table.hpp): each job reports metrics, the
// table renders them by their hints and sizes the columns; every job keeps its columns.
#include "jobs/registry.hpp"
#include "src/engine/sweep.hpp"
#include "src/launcher/live_table.hpp"

#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale;
using jobs::metric;
using jobs::metric_hint;

namespace {

/// The headers of `job`'s columns for its default sweep at P=2.
std::vector<std::string> headers(const std::string& job) {
    const jobs::job& j = jobs::find_job(job);
    jobs::launch_info launch;
    launch.world_size = 2;
    launch.host_bytes_per_rank = 1ull << 40;
    const auto plans = jobs::plan_job(j, {}, launch);
    std::vector<scheduled_case> cases;
    for (const auto& plan : plans)
        cases.push_back({&j, plan});
    std::vector<const scheduled_case*> pointers;
    for (const auto& c : cases)
        pointers.push_back(&c);
    std::vector<std::string> out;
    const std::vector<table_column> columns = job_columns(j, pointers, 2);
    // The header line's '#' takes the first column's first character: a title as wide as
    // its column would lose its first letter ("#ariant").
    if (!columns.empty()) {
        EXPECT_GT(columns.front().width, static_cast<int>(columns.front().header.size()));
    }
    for (const table_column& col : columns) {
        EXPECT_GE(col.width, static_cast<int>(col.header.size())) << col.header;
        out.push_back(col.header);
    }
    return out;
}

} // namespace

TEST(live_table, cells_follow_the_hints) {
    EXPECT_EQ(metric_cell(metric::of_text("op", "allreduce")), "allreduce");
    EXPECT_EQ(metric_cell(metric::of("size", 16777216, "B", metric_hint::count)), "16777216");
    EXPECT_EQ(metric_cell(metric::of("seq", 4096, "", metric_hint::size)), "4K");
    EXPECT_EQ(metric_cell(metric::of("algbw", 14.6031, "GB/s", metric_hint::rate)), "14.6");
    EXPECT_EQ(metric_cell(metric::of("", 123456.7, "tok/s", metric_hint::rate)), "123457");
    EXPECT_EQ(metric_cell(metric::of("sent", 1536 * 1024, "", metric_hint::bytes)), "1.50 MiB");
    EXPECT_EQ(metric_cell(metric::of("t", 0.00123, "", metric_hint::time)), "1.23 ms");
    EXPECT_EQ(metric_cell(metric::of("max_err", 1.7e-6, "", metric_hint::error)), "1.7e-06");
    EXPECT_EQ(metric_cell(metric::of("loss", 0.50712, "", metric_hint::number)), "0.5071");
    EXPECT_EQ(metric_cell(metric::of("#wrong", std::nan(""), "", metric_hint::count)), "-");
}

TEST(live_table, headers_carry_the_unit) {
    EXPECT_EQ(metric_header(metric::of("busbw", 1, "GB/s", metric_hint::rate)), "busbw(GB/s)");
    EXPECT_EQ(metric_header(metric::of("", 1, "tok/s", metric_hint::rate)), "tok/s");
    EXPECT_EQ(metric_header(metric::of("peak/rank", 1, "", metric_hint::bytes)), "peak/rank");
}

TEST(live_table, every_job_keeps_its_columns) {
    using v = std::vector<std::string>;
    EXPECT_EQ(headers("collectives"), (v{"op", "scope", "size(B)", "count", "placement",
                                         "algbw(GB/s)", "busbw(GB/s)", "#wrong"}));
    // The attention jobs' mask columns: the mask, the dense-equivalent rate, the compute
    // reduction and the work imbalance ("-" where a case has no mask). Rates in GF/s per
    // rank, as the comparison table, train_step and the README.
    EXPECT_EQ(headers("ring_attention"),
              (v{"seq", "H/Hkv", "D", "causal", "pass", "layout", "mask", "overlap", "tok/s",
                 "GF/s/rank", "dense-eq(GF/s)", "reduce(x)", "work-imbal", "max_err"}));
    EXPECT_EQ(
        headers("context_parallel"),
        (v{"scheme", "seq", "H/Hkv", "D", "causal", "pass", "layout", "mask", "tok/s", "GF/s/rank",
           "dense-eq(GF/s)", "reduce(x)", "work-imbal", "max_err", "sent/rank", "peak/rank"}));
    EXPECT_EQ(headers("train_step"), (v{"variant", "dpxcp", "tokens", "params(M)", "tok/s",
                                        "GF/s/rank", "loss", "max_err"}));
}

TEST(live_table, eta_weighs_cases_by_their_cost) {
    using ringscale::estimate_left_s;
    using ringscale::eta_case;
    // A case's time is a fixed part (setup, warm-up, barriers, validation) plus a part that
    // grows with its size, not its weight times a rate: one finished size cannot split the
    // two, so the cases to come cost what it took. Proportional extrapolation from a small
    // first case read hours for a launch of about a minute.
    // Two cheap collectives done in 1 s each; two attention cases to come, four times the
    // weight of the first attention case, which took 10 s.
    const std::vector<eta_case> cases = {
        {0, 1, -1}, {0, 1, -1}, {1, 1, -1}, {1, 4, -1}, {1, 4, -1}};
    EXPECT_DOUBLE_EQ(estimate_left_s(cases, {1, 1, 10}), 20.0); // not 2 x 4 x 10 s
    // Before any attention case finished, the launch's finished cases stand in.
    EXPECT_DOUBLE_EQ(estimate_left_s(cases, {1, 1}), 3.0);
    // A first case of 1 byte that took 10 s (the launch's own start-up) says nothing of a
    // rate per byte: three cases of 1,000 bytes to come cost 10 s each, not 10,000 s.
    const std::vector<eta_case> big = {{0, 1, -1}, {0, 1000, -1}, {0, 1000, -1}, {0, 1000, -1}};
    EXPECT_DOUBLE_EQ(estimate_left_s(big, {10}), 30.0);
    // Two sizes finished: fixed 1 s plus 1 s per unit of weight (2 s at 1, 4 s at 3).
    const std::vector<eta_case> fit = {{0, 1, -1}, {0, 3, -1}, {0, 5, -1}, {0, 7, -1}};
    EXPECT_NEAR(estimate_left_s(fit, {2, 4}), 6.0 + 8.0, 1e-9);
    // A fit whose fixed part would be negative is proportional instead (least squares
    // through 0: (1*1 + 2*3) / (1 + 4) = 1.4 s per unit).
    const std::vector<eta_case> steep = {{0, 1, -1}, {0, 2, -1}, {0, 4, -1}};
    EXPECT_NEAR(estimate_left_s(steep, {1, 3}), 5.6, 1e-9);
    // A repetition costs what its first copy took.
    const std::vector<eta_case> repeated = {{0, 1, -1}, {0, 100, -1}, {0, 1, 0}, {0, 100, 1}};
    EXPECT_DOUBLE_EQ(estimate_left_s(repeated, {2, 30}), 32.0);
    EXPECT_DOUBLE_EQ(estimate_left_s(repeated, {2, 30, 2, 30}), 0.0);
}

// The attention kernel and why (attn_kernel, attn_kernel_note) once per launch: the launch's
// before the first case, a case's own only where it differs, each once however many cases.
TEST(live_table, the_attention_kernel_line_shows_once_per_launch) {
    const jobs::job& j = jobs::find_job("ring_attention");
    jobs::launch_info launch;
    launch.world_size = 2;
    launch.host_bytes_per_rank = 1ull << 40;
    const scheduled_case sc{&j, jobs::plan_job(j, {}, launch).at(0)};
    const std::vector<const scheduled_case*> cases(4, &sc);
    device_binding gpu;
    gpu.attn_kernel = "sm90";
    gpu.attn_kernel_note = "auto: sm90 on this compute capability 9.0 GPU";
    live_table table(cases, 2, false, gpu);
    case_record plain, masked;
    masked.group(schema::attr_group::run)[schema::attr::attn_kernel] = std::string("sm80");
    masked.group(schema::attr_group::run)[schema::attr::attn_kernel_note] =
        std::string("a mask beyond causal runs the sm80 kernels");
    testing::internal::CaptureStdout();
    for (int i = 0; i < 4; ++i) {
        table.begin_case(i, sc);
        table.end_case(i, sc, i % 2 ? masked : plain);
    }
    const std::string out = testing::internal::GetCapturedStdout();
    const auto count = [&](const std::string& what) {
        std::size_t n = 0;
        for (auto at = out.find(what); at != std::string::npos; at = out.find(what, at + 1))
            ++n;
        return n;
    };
    EXPECT_EQ(count("# attention kernel "), 2u) << out;
    EXPECT_EQ(count("# attention kernel sm90: auto: sm90 on this compute capability 9.0 GPU\n"), 1u)
        << out;
    EXPECT_EQ(count("# attention kernel sm80: a mask beyond causal"), 1u) << out;
    EXPECT_LT(out.find("# attention kernel sm90"), out.find("# job ring_attention")) << out;
}

TEST(live_table, no_attention_kernel_line_on_the_cpu) {
    const jobs::job& j = jobs::find_job("ring_attention");
    jobs::launch_info launch;
    launch.world_size = 2;
    launch.host_bytes_per_rank = 1ull << 40;
    const scheduled_case sc{&j, jobs::plan_job(j, {}, launch).at(0)};
    live_table table({&sc}, 2, false);
    testing::internal::CaptureStdout();
    table.begin_case(0, sc);
    table.end_case(0, sc, case_record{});
    EXPECT_EQ(testing::internal::GetCapturedStdout().find("attention kernel"), std::string::npos);
}
