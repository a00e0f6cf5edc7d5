// A compute phase judged on its CPU time where others' load stretched its wall time
// (analysis/history/cpu_time): a compute-bound series whose launches 11-14 ran beside 0.9
// cores of other processes, 40% slower in wall time. Where the compute CPU time held, the
// change is judged on it (a tie), named so in the verdict, and the wall-time change stays
// visible (the change table's +40%, a "wall time only" line), not a regression; where the CPU
// time moved too, a regression judged on CPU time; an oversubscription (the ranks' own
// threads on one core) stays judged on wall time, a regression; a file without CPU times is
// judged as before (the mark leaves it not decided).
#include "analysis/history/cpu_time.hpp"
#include "analysis/history/index.hpp"
#include "analysis/history/tables.hpp"
#include "analysis/history/verdict.hpp"
#include "analysis/reading/reader.hpp"
#include "tests/analysis/analysis_fixture.hpp"
#include "tests/analysis/history_fixture.hpp"

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace ringscale::analysis;
using namespace ringscale::analysis::history;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

enum class load { others, own_threads };

/// 14 launches of one compute-bound case (comm 10%), 40% slower in wall time from launch 11
/// under `how`; their CPU time per wall second `cpu_slow` there (1 elsewhere; 0: no CPU
/// datasets at all).
series_set history_of(const std::string& tag, load how, double cpu_slow) {
    const std::string dir = ringscale::test_fixture::fixture_dir(tag);
    for (int j = 0; j < 14; ++j) {
        fixture_file f;
        f.created_utc = fmt::format("2025-01-01T{:02}:00:00Z", j);
        f.launch_id = fmt::format("{:032x}", j + 1);
        fixture_case c;
        c.world_size = 2;
        c.iterations = 5;
        c.noise = 0.005;
        c.comm_fraction = 0.1;
        c.seed = static_cast<std::uint64_t>(j + 1);
        c.base_time_s = 1e-3 * (j >= 10 ? 1.4 : 1.0) * (1 + 0.01 * ((j * 7) % 3));
        c.cpu_per_wall_s = cpu_slow == 0 ? 0 : j >= 10 ? cpu_slow : 1;
        if (j >= 10)
            c.machine =
                how == load::others
                    ? std::vector<std::pair<std::string, std::vector<double>>>{{"foreign_load",
                                                                                {0.9, 0.9}},
                                                                               {"load_resolution",
                                                                                {0.01, 0.01}},
                                                                               {"load_cores",
                                                                                {2, 2}}}
                    : std::vector<std::pair<std::string, std::vector<double>>>{
                          {"foreign_load", {0, 0}},
                          {"load_resolution", {0.01, 0.01}},
                          {"load_cores", {1, 1}},
                          {"own_threads", {2, 2}}};
        f.cases.push_back(c);
        write_fixture_file(fmt::format("{}/launch_{:02}.h5", dir, j), f);
    }
    return ringscale::test_fixture::series_of_dir(dir, {});
}

bool has_line(const verdict& v, const std::string& text) {
    for (const std::string& l : v.lines)
        if (l.find(text) != std::string::npos)
            return true;
    return false;
}

} // namespace

TEST(history_cpu_time, a_wall_time_change_under_others_load_is_judged_on_cpu_time_and_shown) {
    // CPU per wall second 1/1.4 from launch 11: the same compute CPU time, 40% more wall.
    const series_set set = history_of("cpu_held", load::others, 1 / 1.4);
    ASSERT_EQ(set.all.size(), 1u);
    const series& s = set.all[0];
    EXPECT_NEAR(s.points[0].c->compute_cpu_s, 0.9e-3, 0.05e-3); // stored and read back
    ASSERT_EQ(s.changes.size(), 1u);
    const found_change& f = s.changes[0];
    EXPECT_EQ(f.index, 10u);
    EXPECT_NEAR(f.change(), 0.4, 0.05); // the wall time's change stays in the table
    ASSERT_FALSE(std::isnan(f.cpu_change));
    EXPECT_NEAR(f.cpu_change, 0, 0.02);
    EXPECT_EQ(f.verdict.verdict, decision::tie) << f.verdict_line();
    EXPECT_NE(f.verdict_line().find("judged on CPU time: wall time contended"), std::string::npos)
        << f.verdict_line();
    EXPECT_FALSE(s.regressed());
    const verdict v = judge(set, {});
    EXPECT_NE(v.code, 1);
    EXPECT_TRUE(has_line(v, "wall time only at #11 (2025-01-01 10:00): 1 series slower in "
                            "wall time (+4"))
        << fmt::format("{}", fmt::join(v.lines, "\n"));
    const table t = change_table(set);
    ASSERT_EQ(t.rows.size(), 1u);
}

TEST(history_cpu_time, a_cpu_time_change_under_others_load_is_a_regression_judged_on_it) {
    const series_set set = history_of("cpu_moved", load::others, 1.0);
    ASSERT_EQ(set.all.size(), 1u);
    const found_change& f = set.all[0].changes.at(0);
    EXPECT_NEAR(f.cpu_change, 0.4, 0.05);
    EXPECT_EQ(f.verdict.verdict, decision::slower) << f.verdict_line();
    const verdict v = judge(set, {});
    EXPECT_EQ(v.code, 1);
    EXPECT_TRUE(has_line(v, "compute (judged on CPU time: wall time contended); with it:"))
        << fmt::format("{}", fmt::join(v.lines, "\n"));
    EXPECT_TRUE(has_line(v, "(CPU time +4")) << fmt::format("{}", fmt::join(v.lines, "\n"));
    EXPECT_FALSE(has_line(v, "wall time only"));
}

TEST(history_cpu_time, an_oversubscription_stays_judged_on_wall_time) {
    // The ranks' own two threads on one core: CPU time held, the wall time is what was run.
    const series_set set = history_of("cpu_oversubscribed", load::own_threads, 1 / 1.4);
    ASSERT_EQ(set.all.size(), 1u);
    const found_change& f = set.all[0].changes.at(0);
    EXPECT_TRUE(std::isnan(f.cpu_change));
    EXPECT_EQ(f.verdict.verdict, decision::slower) << f.verdict_line();
    EXPECT_EQ(f.verdict_line(), "slower");
    EXPECT_EQ(judge(set, {}).code, 1);
}

TEST(history_cpu_time, without_cpu_times_the_wall_time_is_judged_as_before) {
    const series_set set = history_of("cpu_none", load::others, 0);
    ASSERT_EQ(set.all.size(), 1u);
    EXPECT_TRUE(std::isnan(set.all[0].points[0].c->compute_cpu_s));
    const found_change& f = set.all[0].changes.at(0);
    EXPECT_TRUE(std::isnan(f.cpu_change));
    EXPECT_EQ(f.verdict.verdict, decision::not_decided) << f.verdict_line();
    EXPECT_EQ(f.verdict.reason.rfind("marked: ", 0), 0u) << f.verdict.reason;
}
