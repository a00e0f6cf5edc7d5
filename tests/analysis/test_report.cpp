#include "analysis/commands/command.hpp"
#include "analysis/presentation/html_svg.hpp"
#include "analysis/presentation/plot_panels.hpp"
#include "analysis/presentation/plots.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

/// `ringscale-stats report ARGS...`: its exit status.
int report(std::vector<std::string> args) {
    args.insert(args.begin(), {"ringscale-stats", "report"});
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    std::ostringstream out;
    return run_command(parse_cli(static_cast<int>(argv.size()), argv.data()), out);
}

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
    const std::string out_dir = dir + "/out";
    EXPECT_EQ(report({"--bootstrap", "200", "--family-plots", "all", out_dir, dir + "/study.h5"}),
              0);
    const std::string md = slurp(out_dir + "/report.md");
    for (const char* section :
         {"## Summary", "## Scaling", "## The study's questions", "## Models", "## Bus bandwidth",
          "## Compute vs exposed communication", "## Per-rank heatmaps"})
        EXPECT_NE(md.find(section), std::string::npos) << section;
    for (const char* png : {"schemes_vs_p_01.png", "memory_vs_p_01.png", "scaling_01.png",
                            "busbw.png", "breakdown.png", "heatmap_01.png"})
        EXPECT_TRUE(is_png(out_dir + "/" + png)) << png;
    // The collectives at P=1 moved nothing: not drawn, and the report says so.
    EXPECT_NE(md.find("not rated"), std::string::npos);
    EXPECT_EQ(slurp(out_dir + "/busbw.dat").find("P=1"), std::string::npos);
    // One heatmap per job/variant (its most imbalanced case), not six of one family.
    EXPECT_TRUE(is_png(out_dir + "/heatmap_02.png"));
    EXPECT_FALSE(std::filesystem::exists(out_dir + "/heatmap_03.png"));
    std::filesystem::remove_all(dir);
}

TEST(analysis_report, a_scheme_plot_title_leads_with_what_sets_it_apart) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    const std::string dir = ringscale::test_fixture::fixture_dir("report_titles");
    fixture_file f;
    for (const char* pass : {"fwd", "fwd+bwd"})
        for (int p : {1, 2}) {
            fixture_case c;
            c.world_size = p;
            c.text_params = {{"device", "cpu"}, {"comm", "mpi"}, {"pass", pass}};
            c.rank_skew.assign(static_cast<std::size_t>(p), 1.0);
            f.cases.push_back(c);
        }
    write_fixture_file(dir + "/passes.h5", f);
    const std::string out_dir = dir + "/out";
    EXPECT_EQ(report({"--bootstrap", "100", out_dir, dir + "/passes.h5"}), 0);
    // Each figure's pass comes before the parameters both figures share.
    for (const char* stem : {"schemes_vs_p_01", "schemes_vs_p_02"}) {
        const std::string gp = slurp(out_dir + "/" + stem + ".gp");
        const auto pass = gp.find("pass=fwd"), device = gp.find("device=cpu");
        ASSERT_NE(pass, std::string::npos) << stem;
        ASSERT_NE(device, std::string::npos) << stem;
        EXPECT_LT(pass, device) << gp;
    }
    std::filesystem::remove_all(dir);
}

TEST(analysis_report, a_study_at_one_p_says_why_nothing_is_drawn_against_p) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    const std::string dir = ringscale::test_fixture::fixture_dir("report_one_p");
    fixture_file f;
    for (const char* variant : {"zigzag", "contiguous"})
        for (std::int64_t s : {512, 1024}) {
            fixture_case c;
            c.variant = variant;
            c.world_size = 2;
            c.int_params = {{"seq_len", s}};
            c.rank_skew = {1.0, 1.0};
            f.cases.push_back(c);
        }
    write_fixture_file(dir + "/one_p.h5", f);
    const std::string out_dir = dir + "/out";
    EXPECT_EQ(report({"--bootstrap", "100", out_dir, dir + "/one_p.h5"}), 0);
    const std::string md = slurp(out_dir + "/report.md");
    EXPECT_NE(md.find("Only P=2 measured"), std::string::npos) << md;
    EXPECT_TRUE(is_png(out_dir + "/schemes_vs_s_01.png"));
    EXPECT_FALSE(std::filesystem::exists(out_dir + "/schemes_vs_p_01.png"));
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
    const std::string out_dir = dir + "/out";
    EXPECT_EQ(report({"--bootstrap", "100", out_dir, dir + "/few.h5"}), 0);
    EXPECT_TRUE(is_png(out_dir + "/busbw.png"));
    // Collectives get no scaling arithmetic, so no per-family plot either.
    EXPECT_FALSE(std::filesystem::exists(out_dir + "/scaling_01.png"));
}

TEST(analysis_report, axes_hold_every_point_and_bar) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    const std::string dir = ringscale::test_fixture::fixture_dir("report_axes");
    // Times from 0.5 ms to 400 ms (three decades) with bars reaching 0.2 and 900.
    plot_panel p = make_panel("a title long enough to need a second line when it is wrapped at "
                              "the width of one panel of the figure, never cut",
                              "P (ranks)", "ms");
    p.series = {{"ring", {{1, 0.5, 0.2, 0.7}, {2, 3, 2, 4}, {4, 400, 300, 900}}},
                {"ulysses", {{1, 0.6, NAN, NAN}, {4, 100, 90, 110}}}};
    ASSERT_TRUE(draw_panels({p}, "figure", dir, "axes", 2));
    const std::string gp = slurp(dir + "/axes.gp");
    EXPECT_NE(gp.find("set logscale y"), std::string::npos) << gp; // values span decades
    const auto at = gp.find("set yrange [");
    ASSERT_NE(at, std::string::npos);
    double lo = 0, hi = 0;
    ASSERT_EQ(std::sscanf(gp.c_str() + at, "set yrange [%lf:%lf]", &lo, &hi), 2);
    EXPECT_LT(lo, 0.2); // below the lowest bar
    EXPECT_GT(hi, 900); // above the highest bar
    const auto xat = gp.find("set xrange [");
    double xlo = 0, xhi = 0;
    ASSERT_EQ(std::sscanf(gp.c_str() + xat, "set xrange [%lf:%lf]", &xlo, &xhi), 2);
    EXPECT_LT(xlo, 1 / 1.06); // the dodged series stay inside
    EXPECT_GT(xhi, 4 * 1.06);
    EXPECT_NE(gp.find("'1' 1, '2' 2, '4' 4"), std::string::npos) << gp; // tics at measured P
    EXPECT_EQ(gp.find("..."), std::string::npos);                       // nothing cut
    EXPECT_TRUE(is_png(dir + "/axes.png"));
    std::filesystem::remove_all(dir);
}

TEST(analysis_report, every_line_named_and_its_bars_drawn_when_all_its_points_are_marked) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    const std::string dir = ringscale::test_fixture::fixture_dir("report_marked");
    // Every point of both schemes measured on a busy machine (the schemes-vs-S chart of a
    // shared machine); one name needs escaping for gnuplot and for the SVG.
    plot_panel p =
        make_panel("P = 2", "sequence length S (tokens)", "median step time (ms), 95% CI");
    p.series = {{"ring's <a>", {{1024, 2, 1.5, 2.5}, {2048, 4, 3.5, 4.5}}},
                {"ulysses", {{1024, 3, 2.5, 3.5}, {2048, 5, 4.5, 5.5}}}};
    for (panel_series& s : p.series)
        for (panel_point& pt : s.points)
            pt.mark = "contended";
    ASSERT_TRUE(draw_panels({p}, "figure", dir, "marked", 2));
    const std::string gp = slurp(dir + "/marked.gp");
    // Each scheme's line carries its name in the legend (PNG and SVG), escaped for gnuplot.
    for (const char* title : {"t 'ring''s <a>'", "t 'ulysses'"}) {
        ASSERT_NE(gp.find(title), std::string::npos) << title << "\n" << gp;
        EXPECT_NE(gp.find(title, gp.find("#svg plot")), std::string::npos) << title;
    }
    EXPECT_EQ(gp.find(" w lines "), std::string::npos) << gp; // no unnamed line
    // The marked points' bars are drawn in the SVG as in the PNG, and hidden with them.
    const std::string svg_line = gp.substr(gp.find("#svg plot"));
    EXPECT_NE(svg_line.find("u 1:2:3:4 w yerrorbars pt 6"), std::string::npos) << svg_line;
    const std::map<std::string, std::string> svgs = report_svgs(dir);
    ASSERT_EQ(svgs.count("marked"), 1u);
    const std::string page = inline_svg(svgs.at("marked"), "m");
    EXPECT_NE(page.find("ring&#39;s &lt;a&gt;"), std::string::npos) << "the escaped name";
    std::size_t marked_groups = 0;
    for (auto at = page.find("class=\"marked\""); at != std::string::npos;
         at = page.find("class=\"marked\"", at + 1))
        ++marked_groups;
    EXPECT_EQ(marked_groups, 2u) << "the marked points and their bars"; // toggled together
    std::filesystem::remove_all(dir);
}

TEST(analysis_report, an_axis_claims_a_ci_only_where_bars_are_drawn) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    const std::string dir = ringscale::test_fixture::fixture_dir("report_no_ci");
    plot_panel p = make_panel("P = 2", "S", "median step time (ms), 95% CI");
    p.series = {{"ring", {{1024, 2, NAN, NAN}, {2048, 4, NAN, NAN}}}};
    ASSERT_TRUE(draw_panels({p}, "figure", dir, "no_ci", 2));
    std::string gp = slurp(dir + "/no_ci.gp");
    EXPECT_EQ(gp.find("95% CI'"), std::string::npos) << gp;
    EXPECT_NE(gp.find("(no 95% CI: too few samples)"), std::string::npos) << gp;
    p.series[0].points[1] = {2048, 4, 3, 5}; // one bar: the claim stands
    ASSERT_TRUE(draw_panels({p}, "figure", dir, "no_ci", 2));
    gp = slurp(dir + "/no_ci.gp");
    EXPECT_NE(gp.find("set ylabel 'median step time (ms), 95% CI'"), std::string::npos) << gp;
    std::filesystem::remove_all(dir);
}

TEST(analysis_report, heatmap_colours_span_decades_on_a_log_scale) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    const std::string dir = ringscale::test_fixture::fixture_dir("report_heat");
    case_data c;
    c.world_size = c.world = 2;
    c.rows = 4;
    c.is_warmup = {1, 0, 0, 0};
    // One disturbed iteration 50x the others; compute within one decade.
    c.time_s = {1e-3, 1e-3, 1e-3, 1.2e-3, 50e-3, 50e-3, 1e-3, 1.1e-3};
    c.compute_s = {5e-4, 5e-4, 5e-4, 6e-4, 5e-4, 6e-4, 5e-4, 6e-4};
    plot_heatmap(c, "disturbed", dir, "heat");
    const std::string gp = slurp(dir + "/heat.gp");
    const auto compute = gp.find("compute_s per rank");
    ASSERT_NE(compute, std::string::npos) << gp;
    EXPECT_NE(gp.substr(0, compute).find("set logscale cb"), std::string::npos) << gp;
    EXPECT_NE(gp.rfind("unset logscale cb", compute), std::string::npos) << gp; // compute: linear
    EXPECT_TRUE(is_png(dir + "/heat.png"));
    std::filesystem::remove_all(dir);
}

TEST(analysis_report, wrap_never_cuts) {
    EXPECT_EQ(wrap_text("aa bb cc", 5), "aa bb\ncc");
    EXPECT_EQ(wrap_text("averyveryverylongword b", 4), "averyveryverylongword\nb");
    EXPECT_EQ(wrap_text("", 10), "");
}
