#include "analysis/commands.hpp"
#include "analysis/plots.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

bool is_png(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    char magic[8] = {};
    f.read(magic, 8);
    return f && std::string(magic + 1, 3) == "PNG";
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

} // namespace

TEST(analysis_report, writes_markdown_and_plots) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    const std::string dir = ringscale::test_fixture::fixture_dir("report");
    fixture_file f;
    for (int p : {1, 2, 4, 8}) {
        fixture_case c;
        c.world_size = p;
        c.iterations = 30;
        c.base_time_s = 1e-3 * (0.1 + 0.9 / p);
        c.rank_skew.assign(static_cast<std::size_t>(p), 1.0);
        c.rank_skew.back() = 1.2; // a straggler
        f.cases.push_back(c);
        fixture_case coll;
        coll.job = "collectives";
        coll.variant = "allreduce";
        coll.world_size = p;
        coll.text_params = {{"device", "cpu"}, {"op", "allreduce"}};
        for (std::int64_t bytes : {1024, 65536, 1 << 20}) {
            coll.int_params = {{"bytes", bytes}};
            coll.float_params = {{"busbw_factor", 2.0 * (p - 1) / p}};
            coll.base_time_s = 1e-5 + bytes / 5e9;
            f.cases.push_back(coll);
        }
    }
    write_fixture_file(dir + "/study.h5", f);
    cli_options o;
    o.command = "report";
    o.out_dir = dir + "/out";
    o.inputs = {dir + "/study.h5"};
    o.bootstrap = 200;
    std::ostringstream out;
    EXPECT_EQ(run_command(o, out), 0);
    const std::string md = slurp(o.out_dir + "/report.md");
    for (const char* section : {"## Summary", "## Scaling", "## Models", "## Bus bandwidth",
                                "## Compute vs exposed communication", "## Per-rank heatmaps"})
        EXPECT_NE(md.find(section), std::string::npos) << section;
    for (const char* png : {"scaling_01.png", "busbw.png", "breakdown.png", "heatmap_01.png"})
        EXPECT_TRUE(is_png(o.out_dir + "/" + png)) << png;
    std::filesystem::remove_all(dir);
}

TEST(analysis_report, too_few_iterations_for_a_ci_still_plots) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    // 3 iterations: no median CI (n < 6), so every error bar bound is NaN.
    const std::string dir = ringscale::test_fixture::fixture_dir("report_few");
    fixture_file f;
    for (int p : {1, 2}) {
        fixture_case coll;
        coll.job = "collectives";
        coll.variant = "allreduce";
        coll.world_size = p;
        coll.iterations = 3;
        coll.text_params = {{"device", "cpu"}, {"op", "allreduce"}};
        coll.int_params = {{"bytes", 4096}};
        coll.float_params = {{"busbw_factor", 2.0 * (p - 1) / p}};
        coll.base_time_s = 1e-5;
        coll.rank_skew.assign(static_cast<std::size_t>(p), 1.0);
        f.cases.push_back(coll);
    }
    write_fixture_file(dir + "/few.h5", f);
    cli_options o;
    o.command = "report";
    o.out_dir = dir + "/out";
    o.inputs = {dir + "/few.h5"};
    o.bootstrap = 50;
    std::ostringstream out;
    EXPECT_EQ(run_command(o, out), 0);
    EXPECT_TRUE(is_png(o.out_dir + "/busbw.png"));
    EXPECT_TRUE(is_png(o.out_dir + "/scaling_01.png"));
}
