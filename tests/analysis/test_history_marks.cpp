// Marked launches in a history (the machine marks): the index keeps each
// case's case_data::mark() (the one compare and predict use: contended by the outcome or by
// the machine fields judged again, or drifted) with its estimated effect; a series keeps the
// marked launches, counts them and names the first reason, and the decision rule weighs their
// marks: a mark that could account for the change leaves it "not decided (marked)", never a
// regression; --skip-marked leaves them out as before (counted apart). Each change says what
// moved with it (an oversubscription from one launch on: the ranks' cores).
#include "analysis/history/index.hpp"
#include "analysis/history/records.hpp"
#include "analysis/history/series.hpp"
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

/// A history of 14 launches of one case, 40% slower from launch 10; with `contended`, those
/// slow launches were measured beside other load (the machine fields alone say so: the
/// outcome has no `contended` attribute, so only the reader's judgement marks them).
series_set history_of(const std::string& tag, bool contended, bool skip_marked = false,
                      bool oversubscribed = false) {
    const std::string dir = ringscale::test_fixture::fixture_dir(tag);
    for (int j = 0; j < 14; ++j) {
        fixture_file f;
        f.created_utc = fmt::format("2025-01-01T{:02}:00:00Z", j);
        f.launch_id = fmt::format("{:032x}", j + 1);
        fixture_case c;
        c.world_size = 2;
        c.iterations = 5;
        c.noise = 0.005;
        c.seed = static_cast<std::uint64_t>(j + 1);
        c.base_time_s = j >= 10 ? 1.4e-3 : 1e-3;
        if (contended && j >= 10)
            c.machine = {{"foreign_load", {0.9, 0.9}},
                         {"load_resolution", {0.01, 0.01}},
                         {"load_cores", {2, 2}}};
        if (oversubscribed && j >= 10) // two ranks under taskset -c 0
            c.machine = {{"foreign_load", {0, 0}},
                         {"load_resolution", {0.01, 0.01}},
                         {"load_cores", {1, 1}},
                         {"own_threads", {2, 2}}};
        f.cases.push_back(c);
        write_fixture_file(fmt::format("{}/launch_{:02}.h5", dir, j), f);
    }
    series_options opt;
    opt.skip_marked = skip_marked;
    return ringscale::test_fixture::series_of_dir(dir, opt);
}

} // namespace

TEST(history_marks, the_step_is_found_when_its_launches_are_not_marked) {
    // The control: the same slowdown on a quiet machine is a change at launch 10.
    const series_set set = history_of("history_unmarked", false);
    ASSERT_EQ(set.all.size(), 1u);
    EXPECT_EQ(set.all[0].marked, 0u);
    ASSERT_EQ(set.all[0].changes.size(), 1u);
    EXPECT_EQ(set.all[0].changes[0].index, 10u);
}

TEST(history_marks, contended_launches_stay_counted_and_their_mark_leaves_the_change_undecided) {
    // Other processes used 0.9 of the 2 cores beside the 4 slow launches: a mark whose effect
    // could account for the +40%, so the change is found but not called a regression.
    const series_set set = history_of("history_marked", true);
    ASSERT_EQ(set.all.size(), 1u);
    const series& s = set.all[0];
    EXPECT_EQ(s.marked, 4u);
    EXPECT_EQ(s.skipped, 0u);
    EXPECT_EQ(s.points.size(), 14u);
    ASSERT_EQ(s.changes.size(), 1u);
    EXPECT_EQ(s.changes[0].index, 10u);
    EXPECT_EQ(s.changes[0].verdict.verdict, decision::not_decided);
    EXPECT_EQ(s.changes[0].verdict.reason.rfind("marked: ", 0), 0u) << s.changes[0].verdict.reason;
    EXPECT_NE(s.changes[0].with.find("marks 0/10 -> 4/4 (contended: other processes used 0.90"),
              std::string::npos)
        << s.changes[0].with;
    EXPECT_FALSE(s.regressed());
    EXPECT_EQ(s.first_mark.rfind("contended: other processes used 0.90", 0), 0u) << s.first_mark;
    const verdict v = judge(set, {});
    EXPECT_EQ(v.code, 6);
    bool noted = false;
    for (const std::string& n : set.notes)
        noted = noted ||
                n.find("4 launch(es) measured on a marked machine kept, their marks "
                       "weighed by the decision rule (first: contended: ") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(history_marks, skip_marked_leaves_them_out_as_before) {
    const series_set set = history_of("history_skipped", true, true);
    ASSERT_EQ(set.all.size(), 1u);
    const series& s = set.all[0];
    EXPECT_EQ(s.marked, 0u);
    EXPECT_EQ(s.skipped, 4u);
    EXPECT_EQ(s.points.size(), 10u);
    EXPECT_TRUE(s.changes.empty());
    EXPECT_FALSE(s.regressed());
    EXPECT_EQ(judge(set, {}).code, 0); // 10 launches judged, no change: detectable stated
    bool noted = false;
    for (const std::string& n : set.notes)
        noted = noted || n.find("4 launch(es) measured on a marked machine left out "
                                "(--skip-marked) (first: contended: ") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(history_marks, an_oversubscription_from_one_launch_on_is_a_regression_naming_the_cores) {
    // Launches 11-14 ran two ranks on one core: their own configuration, not a disturbance;
    // the change is a regression (someone looks), and the line says what moved.
    const series_set set = history_of("history_taskset", false, false, true);
    ASSERT_EQ(set.all.size(), 1u);
    const series& s = set.all[0];
    ASSERT_EQ(s.changes.size(), 1u);
    EXPECT_EQ(s.changes[0].index, 10u);
    EXPECT_EQ(s.changes[0].verdict.verdict, decision::slower) << s.changes[0].verdict.reason;
    EXPECT_NE(s.changes[0].with.find("ranks' cores enough -> 1 (oversubscribed: 2 threads on 1 "
                                     "core) at the same launch"),
              std::string::npos)
        << s.changes[0].with;
    EXPECT_TRUE(s.regressed());
    const verdict v = judge(set, {});
    EXPECT_EQ(v.code, 1);
    ASSERT_FALSE(v.lines.empty());
    EXPECT_NE(v.lines[0].find("REGRESSION"), std::string::npos) << v.lines[0];
    EXPECT_NE(v.lines[0].find("at #11"), std::string::npos) << v.lines[0];
    EXPECT_NE(v.lines[0].find("ranks' cores"), std::string::npos) << v.lines[0];
}

TEST(history_marks, a_drifted_case_is_marked_as_compare_marks_it) {
    const std::string dir = ringscale::test_fixture::fixture_dir("history_drift");
    fixture_file f;
    f.cases.push_back(fixture_case{});
    write_fixture_file(dir + "/drift.h5", f);
    std::vector<std::string> warnings;
    std::vector<case_data> cases = read_results_file(dir + "/drift.h5", &warnings);
    std::filesystem::remove_all(dir);
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(summarize_launch(cases).at(0).machine, "");
    // The sentinel's verdict, as the reader sets it; a control character escaped.
    cases[0].drift = "allreduce probe 12% slower\x1b[2J";
    // (with its effect, unbounded where it cannot be estimated: no probe figures)
    EXPECT_EQ(summarize_launch(cases).at(0).machine,
              "drift: allreduce probe 12% slower\\x1b[2J [effect unbounded]");
    EXPECT_EQ(summarize_launch(cases).at(0).machine.rfind(cases[0].mark().substr(0, 20), 0), 0u);
    EXPECT_EQ(mark_text_of(summarize_launch(cases).at(0).machine),
              "drift: allreduce probe 12% slower\\x1b[2J");
    EXPECT_TRUE(std::isinf(mark_effect_of(summarize_launch(cases).at(0).machine)));
    EXPECT_DOUBLE_EQ(mark_effect_of("contended: x [effect x1.250]"), 1.25);
    EXPECT_TRUE(std::isinf(mark_effect_of("contended: an older index's mark, no effect")));
}

TEST(history_marks, a_segments_median_keeps_its_marked_launches) {
    // Launches 1-5: two clean at 1 ms and three marked at 1.5 ms (the median of all five is
    // 1.5 ms, of the clean ones 1 ms); a change at launch 6, then three clean at 2 ms.
    const launch_record l;
    std::vector<launch_case> cases(8);
    const double step_ms[] = {1, 1.5, 1, 1.5, 1.5, 2, 2, 2};
    series s;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        cases[i].step_s = step_ms[i] * 1e-3;
        cases[i].machine = step_ms[i] == 1.5 ? "contended: a busy loop" : "";
        s.points.push_back({&l, &cases[i]});
    }
    s.changes.push_back({});
    s.changes.back().index = 5;
    const std::vector<series_segment> g = segments_of(s);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[0].begin, 0u);
    EXPECT_EQ(g[0].end, 5u);
    EXPECT_DOUBLE_EQ(g[0].median.value, 1.5e-3); // 1e-3 were the marked launches left out
    EXPECT_EQ(g[1].begin, 5u);
    EXPECT_EQ(g[1].end, 8u);
    EXPECT_DOUBLE_EQ(g[1].median.value, 2e-3);
    s.changes.back().index = 8; // a change at the end cuts nothing
    ASSERT_EQ(segments_of(s).size(), 1u);
    EXPECT_DOUBLE_EQ(segments_of(s)[0].median.value, 1.5e-3);
    EXPECT_TRUE(segments_of(series{}).empty());
}

namespace {

/// 12 launches of two collectives series (1K and 1M), 2x slower from launch 7 on, where
/// Open MPI moved from shared memory to TCP; `busy`: every launch marked alike (contended).
index_contents transport_history(bool busy) {
    index_contents in;
    for (int j = 0; j < 12; ++j) {
        launch_record l;
        l.launch = fmt::format("id:{}", j);
        l.path = fmt::format("night{:02}/r.h5", j);
        l.time_s = 1796616780 + 86400 * j; // 2026-12-07 04:13 UTC at j = 0
        l.meta["mpi_transport"] = j < 6 ? "vader" : "tcp";
        l.meta["launchdate"] = std::to_string(l.time_s); // moves every launch: never named
        in.launches.push_back(l);
        for (const char* size : {"1K", "1M"}) {
            launch_case c;
            c.launch = l.launch;
            c.key = fmt::format("collectives/allreduce bytes={}|P=2", size);
            c.label = fmt::format("collectives/allreduce bytes={} P=2", size);
            c.step_s = 1e-3 * (j < 6 ? 1 : 2) * (1 + 0.01 * ((j * 7) % 5));
            c.compute_s = c.wait_s = c.memory_bytes = NAN;
            c.comm_s = c.step_s;
            if (busy)
                c.machine = "contended: other processes used 0.90 of 2 cores [effect x1.30]";
            in.cases.push_back(c);
        }
    }
    return in;
}

} // namespace

TEST(history_marks, regressions_at_one_launch_with_one_cause_are_one_line_naming_it) {
    for (const bool busy : {false, true}) {
        SCOPED_TRACE(busy ? "every launch marked alike" : "a quiet machine");
        series_options opt;
        opt.now_s = 1796616780 + 86400 * 20;
        const index_contents in = transport_history(busy);
        const series_set set = build_series(in, opt);
        ASSERT_EQ(set.all.size(), 2u);
        for (const series& s : set.all) {
            ASSERT_EQ(s.changes.size(), 1u) << s.label;
            EXPECT_EQ(s.changes[0].with, "mpi_transport vader -> tcp at the same launch");
        }
        const verdict v = judge(set, opt);
        EXPECT_EQ(v.code, 1) << v.summary;
        ASSERT_EQ(v.lines.size(), 3u) << fmt::format("{}", fmt::join(v.lines, "\n"));
        EXPECT_EQ(v.lines[0].rfind("REGRESSION at #7 (2026-12-13 04:13): 2 series slower (+", 0),
                  0u)
            << v.lines[0];
        EXPECT_NE(v.lines[0].find("%), communication; with it: mpi_transport vader -> tcp at the "
                                  "same launch"),
                  std::string::npos)
            << v.lines[0];
        EXPECT_EQ(v.lines[1].rfind("  collectives/allreduce bytes=1", 0), 0u) << v.lines[1];
        EXPECT_EQ(v.lines[2].rfind("  collectives/allreduce bytes=1", 0), 0u) << v.lines[2];
    }
}

// The attention kernel is what moved with a change: the launch that switched the GPU attention
// from the own sm90 kernels to cuDNN names the switch and cuDNN's version, first.
TEST(history_marks, a_change_of_attention_kernel_is_named_with_its_change) {
    index_contents in;
    for (int j = 0; j < 12; ++j) {
        launch_record l;
        l.launch = fmt::format("id:{}", j);
        l.path = fmt::format("night{:02}/r.h5", j);
        l.time_s = 1796616780 + 86400 * j;
        l.meta["attn_kernel"] = j < 6 ? "sm90" : "cudnn";
        l.meta["cudnn_version"] = "9.19.0";
        l.meta["gpu_name"] = "NVIDIA H200";
        if (j >= 6)
            l.meta["cudnn_version"] = "9.19.1";
        in.launches.push_back(l);
        launch_case c;
        c.launch = l.launch;
        c.key = "ring_attention S=32K|P=8";
        c.label = "ring_attention S=32K P=8";
        c.step_s = 1e-2 * (j < 6 ? 1.5 : 1) * (1 + 0.01 * ((j * 7) % 5));
        c.compute_s = c.step_s;
        c.wait_s = c.comm_s = c.memory_bytes = NAN;
        in.cases.push_back(c);
    }
    series_options opt;
    opt.now_s = 1796616780 + 86400 * 20;
    const series_set set = build_series(in, opt);
    ASSERT_EQ(set.all.size(), 1u);
    ASSERT_EQ(set.all[0].changes.size(), 1u);
    EXPECT_EQ(set.all[0].changes[0].with, "attn_kernel sm90 -> cudnn at the same launch; "
                                          "cudnn_version 9.19.0 -> 9.19.1 at the same launch");
}
