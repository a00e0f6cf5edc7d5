// `ringscale-stats crossover` on fixture files with a planted crossover: all-gather wins at
// short sequences, the ring at long ones, trading places between S = 4K and 8K at P = 4.
#include "analysis/commands/command.hpp"
#include "analysis/comparisons/crossover.hpp"
#include "analysis/presentation/plots.hpp"
#include "src/base/error.hpp"
#include "tests/analysis/analysis_fixture.hpp"
#include "tests/analysis/stats_cli.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;
using ringscale::test_fixture::stats_json;

namespace {

double ring_time(double s) {
    return 2e-3 + 1e-10 * s * s;
}
double allgather_time(double s) {
    return 0.5e-3 + 1.5e-10 * s * s;
}

fixture_case scheme(const std::string& job, const std::string& variant, std::int64_t s) {
    fixture_case c;
    c.job = job;
    c.variant = variant;
    c.world_size = 4;
    c.text_params = {
        {"device", "cpu"}, {"comm", "mpi"}, {"dtype", "float32"}, {"layout", "zigzag"}};
    c.int_params = {{"seq_len", s}, {"heads", 8}};
    c.noise = 0.01;
    c.iterations = 20;
    c.seed = static_cast<std::uint64_t>(s) + variant.size();
    return c;
}

/// The planted study, launched `launches` times (one file each, seeds differ).
std::string study_dir(int launches = 2) {
    const std::string dir = ringscale::test_fixture::fixture_dir("crossover");
    for (int l = 0; l < launches; ++l) {
        fixture_file f;
        for (std::int64_t s : {1024, 2048, 4096, 8192, 16384}) {
            fixture_case ring = scheme("ring_attention", "ring/zigzag", s);
            ring.text_params.emplace_back("overlap", "on");
            ring.base_time_s = ring_time(static_cast<double>(s));
            ring.peak_host_bytes = 1u << 20;
            ring.seed += 1000 * l;
            f.cases.push_back(ring);
            fixture_case ag = scheme("context_parallel", "allgather", s);
            ag.int_params.emplace_back("ulysses_degree", 0);
            ag.base_time_s = allgather_time(static_cast<double>(s));
            ag.peak_host_bytes = 4u << 20;
            ag.seed += 1000 * l;
            f.cases.push_back(ag);
        }
        f.git_commit = "fixture000" + std::to_string(l);
        write_fixture_file(dir + "/study" + std::to_string(l) + ".h5", f);
    }
    return dir;
}

/// Ring attention at P=1 in two layouts: identical work, with a slow drift that makes the
/// later case look 1% slower at every S, alternating which layout ran later.
std::string identical_work_dir() {
    const std::string dir = ringscale::test_fixture::fixture_dir("crossover_p1");
    for (int l = 0; l < 2; ++l) {
        fixture_file f;
        int k = 0;
        for (std::int64_t s : {512, 1024, 2048, 4096})
            for (const char* layout : {"contiguous", "zigzag"}) {
                fixture_case c = scheme("ring_attention", std::string("ring/") + layout, s);
                c.world_size = 1;
                c.text_params = {{"device", "cpu"},
                                 {"comm", "mpi"},
                                 {"dtype", "float32"},
                                 {"layout", layout},
                                 {"overlap", "on"}};
                const bool later = (s / 512 + (layout[0] == 'z')) % 2 == 0;
                c.base_time_s = ring_time(static_cast<double>(s)) * (later ? 1.012 : 1.0);
                c.noise = 0.001;
                c.seed = static_cast<std::uint64_t>(++k + 100 * l);
                f.cases.push_back(c);
            }
        f.git_commit = "fixturep1" + std::to_string(l);
        write_fixture_file(dir + "/p1_" + std::to_string(l) + ".h5", f);
    }
    return dir;
}

} // namespace

TEST(analysis_crossover, finds_the_planted_crossover) {
    const auto j = stats_json({"crossover", study_dir(), "--format", "json", "--bootstrap", "200"});
    const auto& cells = j.at("fastest scheme");
    ASSERT_EQ(cells.size(), 5u) << j.dump(1);
    EXPECT_EQ(cells[0].at("fastest"), "allgather"); // S = 1K
    EXPECT_EQ(cells[0].at("runner_up"), "ring/zigzag");
    EXPECT_EQ(cells[4].at("fastest"), "ring/zigzag"); // S = 16K
    for (const auto& c : cells) {
        EXPECT_LE(c.at("margin_lo_pct").get<double>(), c.at("margin_pct").get<double>());
        EXPECT_GE(c.at("margin_hi_pct").get<double>(), c.at("margin_pct").get<double>());
        EXPECT_EQ(c.at("least_memory"), "ring/zigzag"); // the reason to pick it when slower
        EXPECT_NEAR(c.at("least_memory_peak_mib").get<double>(), 1.0, 1e-9);
    }
    // allgather at 1K: margin = ring / allgather - 1
    const double margin = 100 * (ring_time(1024) / allgather_time(1024) - 1);
    EXPECT_NEAR(cells[0].at("margin_pct").get<double>(), margin, 0.1 * margin);
    const auto& cross = j.at("crossovers");
    ASSERT_EQ(cross.size(), 1u) << cross.dump(1);
    EXPECT_EQ(cross[0].at("faster_below"), "allgather");
    EXPECT_EQ(cross[0].at("faster_above"), "ring/zigzag");
    EXPECT_EQ(cross[0].at("s_below").get<double>(), 4096);
    EXPECT_EQ(cross[0].at("s_above").get<double>(), 8192);
    // The true boundary is S = sqrt(3e7) = 5477; interpolation in log S lands near it.
    EXPECT_NEAR(cross[0].at("boundary").get<double>(), 5477, 0.12 * 5477);
    EXPECT_EQ(cross[0].at("confirmed"), true); // 20% apart at both ends, 1% noise, 2 launches
    EXPECT_GT(cross[0].at("ratio_below_lo").get<double>(), 1.01);
    EXPECT_GT(cross[0].at("ratio_above_lo").get<double>(), 1.01);
    EXPECT_EQ(cells[0].at("verdict"), "confirmed");
}

TEST(analysis_crossover, one_launch_confirms_nothing) {
    // The same planted crossover from one launch: launch-to-launch noise is unknown.
    const auto j =
        stats_json({"crossover", study_dir(1), "--format", "json", "--bootstrap", "200"});
    const auto& cross = j.at("crossovers");
    ASSERT_EQ(cross.size(), 1u) << cross.dump(1);
    EXPECT_EQ(cross[0].at("confirmed"), false);
    for (const auto& c : j.at("fastest scheme"))
        EXPECT_EQ(c.at("verdict"), "not decided (one launch)");
}

TEST(analysis_crossover, identical_work_at_one_rank_is_never_ranked) {
    // At P=1 both layouts compute the same attention; a 1.2% drift alternates which looks
    // faster, and iteration noise alone (0.1%) would call each order certain.
    const auto j =
        stats_json({"crossover", identical_work_dir(), "--format", "json", "--bootstrap", "200"});
    for (const auto& c : j.at("fastest scheme"))
        EXPECT_EQ(c.at("verdict"), "same work (P=1)") << c.dump();
    EXPECT_TRUE(j.at("crossovers").empty()) << j.at("crossovers").dump(1);
}

TEST(analysis_crossover, identical_work_sets_the_noise_floor) {
    crossover_cell same;
    same.same_work = true;
    same.seq_len = 1024;
    same.schemes = {{"ring/zigzag", nullptr, 1.0, 0, "ring_attention|ring"},
                    {"ring/contiguous", nullptr, 1.05, 0, "ring_attention|ring"},
                    {"ulysses", nullptr, 4.0, 0, "context_parallel|ulysses"}}; // other work
    crossover_cell quiet = same, disturbed = same;
    quiet.schemes[1].median_s = 1.02;
    disturbed.schemes[1].median_s = 2.5; // one cell hit by a neighbour's burst
    const noise_floor f = between_case_noise({same, quiet, disturbed}, 0.01);
    EXPECT_NEAR(f.fraction, 0.05, 1e-12); // the median spread, not the largest
    EXPECT_NE(f.source.find("identical work"), std::string::npos);
    EXPECT_NEAR(between_case_noise({}, 0.01).fraction, 0.01, 1e-12);
}

TEST(analysis_crossover, one_scheme_is_refused) {
    const std::string dir = ringscale::test_fixture::fixture_dir("crossover_one");
    fixture_file f;
    f.cases.push_back(scheme("ring_attention", "ring/zigzag", 1024));
    ringscale::test_fixture::write_fixture_file(dir + "/one.h5", f);
    const char* argv[] = {"ringscale-stats", "crossover", dir.c_str()};
    const parsed_cli o = parse_cli(3, argv);
    std::ostringstream out;
    EXPECT_THROW(run_command(o, out), ringscale::config_error);
}

TEST(analysis_crossover, report_has_the_section_and_plot) {
    const std::string dir = study_dir();
    const char* argv[] = {"ringscale-stats", "report", "--bootstrap", "100", "", dir.c_str()};
    const std::string out_dir = dir + "/report";
    argv[4] = out_dir.c_str();
    const parsed_cli o = parse_cli(6, argv);
    std::ostringstream out;
    ASSERT_EQ(run_command(o, out), 0);
    std::ifstream f(out_dir + "/report.md");
    std::stringstream md;
    md << f.rdbuf();
    EXPECT_NE(md.str().find("## Crossovers"), std::string::npos);
    EXPECT_NE(md.str().find("| allgather"), std::string::npos);
    if (have_gnuplot()) {
        EXPECT_TRUE(std::filesystem::exists(out_dir + "/schemes_vs_s_01.png"));
    }
}
