#include "analysis/measures/summary.hpp"
#include "analysis/presentation/views.hpp"
#include "analysis/reading/reader.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

/// Two ranks, one warm-up row, ten measured rows: rank 0 takes k ms in row k (1..10) and
/// rank 1 half of that, except row 10 where rank 1 takes 100 ms (an outlier).
fixture_case known_case() {
    fixture_case c;
    c.world_size = 2;
    c.warmup = 1;
    c.iterations = 10;
    c.comm_fraction = 0.25;
    c.explicit_time_s = {0.5, 0.5};
    for (int k = 1; k <= 10; ++k) {
        c.explicit_time_s.push_back(k * 1e-3);
        c.explicit_time_s.push_back(k == 10 ? 0.1 : k * 0.5e-3);
    }
    return c;
}

struct loaded {
    std::string dir;
    result_set rs;
    std::vector<pooled_case> pooled;
    explicit loaded(const fixture_file& f, const char* tag)
        : dir(ringscale::test_fixture::fixture_dir(tag)) {
        write_fixture_file(dir + "/f.h5", f);
        rs = load_results({dir}, false);
        pooled = pool_cases(rs.cases);
    }
    ~loaded() { std::filesystem::remove_all(dir); }
};

} // namespace

TEST(analysis_summary, exact_statistics_of_a_known_case) {
    fixture_file f;
    f.cases = {known_case()};
    f.cases[0].float_params = {{"flops_per_iter", 2e9}, {"tokens_per_iter", 4096}};
    loaded l(f, "summary_exact");
    const case_summary s = summarize(l.pooled.at(0), {});
    // steps (ms): 1..9 then 100 (the slow rank 1 in the last row)
    EXPECT_EQ(s.n, 10u);
    EXPECT_DOUBLE_EQ(s.median.value, 5.5e-3);
    EXPECT_DOUBLE_EQ(s.median.lo, 2e-3); // ranks 2 and 9 for n = 10
    EXPECT_DOUBLE_EQ(s.median.hi, 9e-3);
    EXPECT_NEAR(s.p10, 1.9e-3, 1e-15);  // h = 0.9
    EXPECT_NEAR(s.p90, 18.1e-3, 1e-15); // h = 8.1: 9 + 0.1 * 91
    EXPECT_DOUBLE_EQ(s.min, 1e-3);
    EXPECT_NEAR(s.mean, 145e-4, 1e-15); // (45 + 100) / 10 ms
    EXPECT_EQ(s.outliers, 1u);          // fences 3.25 +- ... (ms): 100 is outside
    EXPECT_FALSE(s.outliers_removed);
    // per-rank medians: rank 0 5.5 ms, rank 1 median of {0.5, 1, ..., 4.5, 100} = 2.75 ms
    EXPECT_NEAR(s.imbalance, 5.5 / ((5.5 + 2.75) / 2), 1e-12);
    EXPECT_NEAR(s.comm_share, 0.25, 1e-12);
    EXPECT_NEAR(s.compute_share, 0.75, 1e-12);
    EXPECT_NEAR(*s.flops_per_rank, 2e9 / 5.5e-3 / 2, 1e-3);
    EXPECT_NEAR(*s.tokens_per_s, 4096 / 5.5e-3, 1e-6);
    EXPECT_FALSE(s.algbw.has_value());
    const time_breakdown b = breakdown(l.pooled.at(0));
    EXPECT_NEAR(b.comm_wait_s / (b.compute_s + b.comm_wait_s + b.other_s), 0.25, 1e-12);
}

TEST(analysis_summary, outliers_removed_only_on_request) {
    fixture_file f;
    f.cases = {known_case()};
    loaded l(f, "summary_outliers");
    summary_options opt;
    opt.remove_outliers = true;
    const case_summary s = summarize(l.pooled.at(0), opt);
    EXPECT_TRUE(s.outliers_removed);
    EXPECT_EQ(s.outliers, 1u);
    EXPECT_EQ(s.n, 9u);
    EXPECT_DOUBLE_EQ(s.median.value, 5e-3);
}

TEST(analysis_summary, collectives_bandwidth_and_sanity_gate) {
    fixture_case c;
    c.job = "collectives";
    c.variant = "allreduce";
    c.world_size = 4;
    c.base_time_s = 1e-3;
    c.noise = 0;
    c.text_params = {{"device", "cpu"}, {"dtype", "fp32"}, {"op", "allreduce"}};
    c.int_params = {{"bytes", 1 << 20}};
    c.float_params = {{"busbw_factor", 1.5}, {"comm_bytes_per_iter", 1.5 * (1 << 20)}};
    fixture_file f;
    f.cases = {c};
    loaded l(f, "summary_bw");
    const case_summary s = summarize(l.pooled.at(0), {});
    EXPECT_NEAR(*s.algbw, (1 << 20) / 1e-3, 1e-3);
    EXPECT_NEAR(*s.busbw, 1.5 * (1 << 20) / 1e-3, 1e-3);
    EXPECT_TRUE(s.rejected.empty());
    summary_options strict;
    strict.limits.link_gbs = 1.0; // 1 GB/s < 1.57 GB/s busbw: impossible
    const case_summary g = summarize(l.pooled.at(0), strict);
    EXPECT_FALSE(g.busbw.has_value());
    ASSERT_FALSE(g.rejected.empty());
    EXPECT_NE(g.rejected[0].find("collectives/allreduce"), std::string::npos);
    EXPECT_NE(g.rejected[0].find("above the ceiling (--link-gbs 1)"), std::string::npos);
    EXPECT_EQ(g.flags.at("busbw_gbs"), "impossible");
}

namespace {

fixture_case broadcast(int world, double time_s) {
    fixture_case c;
    c.job = "collectives";
    c.variant = "broadcast";
    c.world_size = world;
    c.base_time_s = time_s;
    c.noise = 0;
    c.text_params = {{"device", "cpu"}, {"dtype", "fp32"}, {"op", "broadcast"}};
    c.int_params = {{"bytes", 16 << 20}};
    c.float_params = {{"busbw_factor", 1.0}, {"comm_bytes_per_iter", 16 << 20}};
    return c;
}

} // namespace

TEST(analysis_summary, a_collective_on_one_rank_is_not_rated) {
    // np=1 broadcast of 16 MiB in 0.13 us: "129,055 GB/s" before the gate; a no-op.
    fixture_file f;
    f.cases = {broadcast(1, 1.3e-7)};
    loaded l(f, "summary_noop");
    const case_summary s = summarize(l.pooled.at(0), {});
    EXPECT_FALSE(s.busbw.has_value());
    EXPECT_FALSE(s.algbw.has_value());
    EXPECT_EQ(s.flags.at("busbw_gbs"), "no-op");
    EXPECT_TRUE(s.rejected.empty()); // not an impossible figure: no figure at all
    const table t = summary_table({s});
    const auto col = std::find(t.keys.begin(), t.keys.end(), "busbw_gbs") - t.keys.begin();
    ASSERT_LT(static_cast<std::size_t>(col), t.keys.size());
    EXPECT_EQ(t.rows[0][col].text, "no-op");
    EXPECT_TRUE(t.rows[0][col].value.is_null()); // JSON and CSV carry no number
    EXPECT_EQ(to_json(t)[0].at("withheld"), "algbw_gbs=no-op busbw_gbs=no-op");
}

TEST(analysis_summary, bandwidth_above_the_default_ceiling_is_withheld) {
    // 16 MiB in 1 us on 2 CPU ranks: 16,777 GB/s, above the 1000 GB/s CPU ceiling.
    fixture_file f;
    f.cases = {broadcast(2, 1e-6)};
    loaded l(f, "summary_ceiling");
    const case_summary s = summarize(l.pooled.at(0), {});
    EXPECT_FALSE(s.busbw.has_value());
    EXPECT_EQ(s.flags.at("busbw_gbs"), "impossible");
    ASSERT_FALSE(s.rejected.empty());
    EXPECT_NE(s.rejected[0].find("CPU ceiling 1000 GB/s"), std::string::npos) << s.rejected[0];
    // A believable rate passes: 16 MiB in 10 ms.
    fixture_file ok;
    ok.cases = {broadcast(2, 1e-2)};
    loaded l2(ok, "summary_ceiling_ok");
    EXPECT_TRUE(summarize(l2.pooled.at(0), {}).busbw.has_value());
}

TEST(analysis_summary, link_ceilings_by_device) {
    EXPECT_EQ(known_link("cpu", "").gbs, 1000);
    EXPECT_EQ(known_link("cuda", "NVIDIA H100 80GB HBM3").gbs, 900);
    EXPECT_EQ(known_link("cuda", "NVIDIA A100-SXM4-80GB").gbs, 600);
    EXPECT_EQ(known_link("cuda", "Some Future GPU").gbs, 1800);
    EXPECT_EQ(noop_reason("collectives", 2), "");
    EXPECT_NE(noop_reason("collectives", 1), "");
    EXPECT_EQ(noop_reason("ring_attention", 1), "");
}

TEST(analysis_summary, flops_above_peak_are_withheld) {
    fixture_case c = known_case();
    // 1e15 FLOP per iteration at 5.5 ms on 2 ranks: ~9e16 FLOP/s per rank, beyond any CPU
    c.float_params = {{"flops_per_iter", 1e15}};
    fixture_file f;
    f.threads_per_rank = 4;
    f.cases = {c};
    loaded l(f, "summary_peak");
    const case_summary s = summarize(l.pooled.at(0), {});
    EXPECT_FALSE(s.flops_per_rank.has_value());
    ASSERT_EQ(s.rejected.size(), 1u);
    EXPECT_NE(s.rejected[0].find("above the peak (CPU ceiling 384 GFLOP/s/core x 4 threads)"),
              std::string::npos);
    summary_options opt;
    opt.limits.peak_gflops = 1e9; // the user says the device is that fast
    EXPECT_TRUE(summarize(l.pooled.at(0), opt).flops_per_rank.has_value());
}

TEST(analysis_summary, known_peaks_table) {
    const auto h100 = known_peak("cuda", "NVIDIA H100 80GB HBM3", "bf16", 0);
    ASSERT_TRUE(h100.has_value());
    EXPECT_DOUBLE_EQ(h100->gflops, 989.4e3);
    EXPECT_FALSE(known_peak("cuda", "Mystery GPU", "fp32", 0).has_value());
    EXPECT_EQ(normalise_dtype("bfloat16"), "bf16");
    EXPECT_EQ(normalise_dtype("float64"), "fp64");
    EXPECT_EQ(normalise_dtype("half"), "fp16");
}

TEST(analysis_summary, failed_cases_are_listed_not_summarised) {
    fixture_case c = known_case();
    c.status = "failed";
    c.error = "validation failed";
    fixture_file f;
    f.cases = {c};
    loaded l(f, "summary_failed");
    const case_summary s = summarize(l.pooled.at(0), {});
    EXPECT_EQ(s.status, "failed");
    EXPECT_EQ(s.error, "validation failed");
    EXPECT_EQ(s.launches, 0u);
    EXPECT_TRUE(std::isnan(s.median.value));
}
