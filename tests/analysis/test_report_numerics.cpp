// The report's Training numerics section on the synthetic numerics study
// (tests/analysis/numerics_study.hpp): one panel per dtype in each figure, the verdicts those of
// `ringscale-stats numerics` on the same files, no section without numerics cases, a non-finite
// loss drawn as a gap with a marker (the plot still drawn), hostile labels escaped in report.md
// and in the gnuplot script (a payload that would run makes a file), prose within 100 columns.
#include "analysis/commands/command.hpp"
#include "analysis/presentation/numerics_report.hpp"
#include "analysis/presentation/plots.hpp"
#include "analysis/presentation/report_model.hpp"
#include "analysis/reading/reader.hpp"
#include "tests/analysis/numerics_study.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace ringscale::analysis;
namespace fx = ringscale::test_fixture;

namespace {

std::string run(std::vector<std::string> args) {
    args.insert(args.begin(), "ringscale-stats");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    std::ostringstream out;
    EXPECT_EQ(run_command(parse_cli(static_cast<int>(argv.size()), argv.data()), out), 0);
    return out.str();
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

/// The study written as DIR/numerics.h5; DIR.
std::string write_study(const std::string& tag, const fx::numerics_study& s) {
    const std::string dir = fx::fixture_dir(tag);
    fx::fixture_file f;
    f.cases = fx::numerics_cases(s);
    fx::write_fixture_file(dir + "/numerics.h5", f);
    return dir;
}

/// The last cell of each row of report.md's table whose header has `column` (its Markdown
/// escapes kept).
std::vector<std::string> column_cells(const std::string& md, const std::string& header_has) {
    std::vector<std::string> out;
    std::istringstream in(md);
    bool in_table = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("|", 0) != 0) {
            in_table = false;
            continue;
        }
        if (!in_table && line.find(header_has) != std::string::npos) {
            in_table = true;
            std::getline(in, line); // the |---| row
            continue;
        }
        if (in_table)
            out.push_back(table_cells(line).back());
    }
    return out;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

numerics_result judged(const std::string& dir, std::vector<pooled_case>& keep, result_set& rs) {
    rs = load_results({dir + "/numerics.h5"}, false);
    keep = pool_cases(rs.cases, true);
    return numerics_of(keep, 2.0);
}

} // namespace

TEST(report_numerics, one_panel_per_dtype_and_the_views_verdicts) {
    const std::string dir = write_study("report_numerics", {});
    const std::string out = dir + "/out";
    run({"report", "--bootstrap", "100", out, dir + "/numerics.h5"});
    const std::string md = slurp(out + "/report.md");
    ASSERT_NE(md.find("\n## Training numerics\n"), std::string::npos) << md;
    // The verdicts of the report's case table are `numerics`' on the same file, in its order.
    const auto j = nlohmann::json::parse(run({"numerics", dir, "--format", "json"}));
    std::vector<std::string> expected;
    for (const auto& row : j.at("numerics by case"))
        expected.push_back(row.at("verdict"));
    EXPECT_EQ(column_cells(md, "| floor param |"), expected) << md;
    ASSERT_EQ(expected.size(), 12u);                        // 2 dtypes x 2 configurations x 3 P
    EXPECT_EQ(count(md, "diverges at step 15 (loss)"), 2u); // the case and its configuration
    EXPECT_NE(md.find("2 of 12 cases diverge."), std::string::npos);
    // Prose wraps at 100 columns; tables stay tables.
    std::istringstream lines(md);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("|", 0) != 0) {
            EXPECT_LE(line.size(), 100u) << line;
        }
    }
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed: the figures were not drawn";
    for (const char* stem : {"numerics_loss", "numerics_divergence"}) {
        EXPECT_TRUE(std::filesystem::exists(out + "/" + stem + ".png")) << stem;
        const std::string gp = slurp(out + "/" + stem + ".gp");
        EXPECT_NE(gp.find("set multiplot layout 1,2"), std::string::npos) << gp.substr(0, 400);
        EXPECT_EQ(count(gp, "\nset title 'bf16'"), 1u) << stem;
        EXPECT_EQ(count(gp, "\nset title 'fp32'"), 1u) << stem;
        EXPECT_NE(md.find(std::string("](") + stem + ".png)"), std::string::npos) << stem;
    }
    EXPECT_NE(slurp(out + "/numerics_divergence.gp").find("'2 x floor'"), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(report_numerics, panels_one_per_dtype_with_the_floor_and_k_times_it) {
    fx::numerics_study s;
    s.dtypes = {"fp32", "bf16", "fp16"};
    const std::string dir = write_study("report_numerics_panels", s);
    std::vector<pooled_case> pooled;
    result_set rs;
    const numerics_result r = judged(dir, pooled, rs);
    for (const bool divergence : {false, true}) {
        const auto panels = numerics_panels(r, divergence);
        ASSERT_EQ(panels.size(), 3u);
        EXPECT_EQ(panels[0].title, "bf16");
        EXPECT_EQ(panels[2].title, "fp32");
        // 2 configurations x 3 P, and the reference (one seed) or the floor and 2 x floor.
        for (const plot_panel& p : panels)
            EXPECT_EQ(p.series.size(), divergence ? 8u : 7u) << p.title;
    }
    const plot_panel fp32 = numerics_panels(r, true)[2];
    const auto floor = std::find_if(fp32.series.begin(), fp32.series.end(),
                                    [](const panel_series& l) { return l.name == "2 x floor"; });
    ASSERT_NE(floor, fp32.series.end());
    EXPECT_DOUBLE_EQ(floor->points[9].y, 2 * 10 * 1e-6); // step 10 of fp32's floor 1e-6 x step
    std::filesystem::remove_all(dir);
}

TEST(report_numerics, a_non_finite_loss_is_a_gap_and_a_marker) {
    const std::string dir = write_study("report_numerics_nan", {});
    std::vector<pooled_case> pooled;
    result_set rs;
    const numerics_result r = judged(dir, pooled, rs);
    const plot_panel fp32 = numerics_panels(r, false)[1]; // the last dtype: the planted cases
    ASSERT_EQ(fp32.title, "fp32");
    const auto nan_line =
        std::find_if(fp32.series.begin(), fp32.series.end(), [](const panel_series& l) {
            return l.name.find("ulysses") != std::string::npos &&
                   l.name.find("P=4") != std::string::npos;
        });
    ASSERT_NE(nan_line, fp32.series.end());
    ASSERT_EQ(nan_line->points.size(), 40u);
    EXPECT_TRUE(std::isfinite(nan_line->points[23].y));
    for (std::size_t i = 24; i < 40; ++i) // inf at step 25, NaN after: gaps
        EXPECT_TRUE(std::isnan(nan_line->points[i].y)) << i;
    bool marked = false;
    for (const panel_marker& m : fp32.markers)
        marked = marked || (m.x == 25 && m.text.find("loss +inf") != std::string::npos);
    EXPECT_TRUE(marked);
    EXPECT_EQ(fp32.markers.size(), 2u); // the jump at step 15 too
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed";
    const std::string out = dir + "/out";
    run({"report", "--bootstrap", "100", out, dir + "/numerics.h5"});
    EXPECT_TRUE(std::filesystem::exists(out + "/numerics_loss.png"));
    EXPECT_EQ(slurp(out + "/numerics_loss.dat").find("inf"), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(report_numerics, no_numerics_case_no_section) {
    const std::string dir = fx::fixture_dir("report_numerics_none");
    fx::fixture_file f;
    f.cases.push_back(fx::fixture_case{});
    fx::write_fixture_file(dir + "/plain.h5", f);
    run({"report", "--bootstrap", "100", dir + "/out", dir + "/plain.h5"});
    const std::string md = slurp(dir + "/out/report.md");
    ASSERT_NE(md.find("## Summary"), std::string::npos);
    EXPECT_EQ(md.find("Training numerics"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/numerics_loss.png"));
    std::filesystem::remove_all(dir);
}

TEST(report_numerics, hostile_labels_are_text) {
    fx::numerics_study s;
    s.variant = "x' . system('touch PWNED') . '|<b>bold</b>`[a](javascript:1)`";
    const std::string dir = write_study("report_numerics_hostile", s);
    const std::string out = dir + "/out";
    run({"report", "--bootstrap", "100", out, dir + "/numerics.h5"});
    const std::string md = slurp(out + "/report.md");
    ASSERT_NE(md.find("## Training numerics"), std::string::npos);
    EXPECT_EQ(md.find("<b>"), std::string::npos);
    EXPECT_NE(md.find("\\|\\<b\\>bold"), std::string::npos) << md;
    const std::string html = slurp(out + "/report.html");
    EXPECT_EQ(html.find("<b>bold"), std::string::npos);
    EXPECT_EQ(html.find("href=\"javascript"), std::string::npos);
    EXPECT_NE(html.find("&lt;b&gt;bold"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(out + "/PWNED"));
    EXPECT_FALSE(std::filesystem::exists("PWNED"));
    if (have_gnuplot()) { // the payload is in the script, as a quoted string
        EXPECT_NE(slurp(out + "/numerics_loss.gp").find("x'' . system(''touch PWNED'')"),
                  std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

TEST(report_numerics, long_and_many_seeded_studies_are_thinned_and_say_so) {
    fx::numerics_study s;
    s.dtypes = {"fp32"};
    s.seeds = {0, 1, 2};
    s.steps = 1000;
    const std::string dir = write_study("report_numerics_long", s);
    std::vector<pooled_case> pooled;
    result_set rs;
    const numerics_result r = judged(dir, pooled, rs);
    ASSERT_EQ(r.cases.size(), 18u);
    const plot_panel p = numerics_panels(r, true).at(0);
    // The first seed of each configuration and P (the two diverged among them), every 4th step.
    EXPECT_EQ(p.title, "fp32: 6 of 18 cases (every diverged one first, then the first seed of "
                       "each configuration and P); every 4th step");
    ASSERT_EQ(p.series.size(), 8u);
    for (const panel_series& l : p.series) {
        EXPECT_LE(l.points.size(), 252u) << l.name;
        EXPECT_GE(l.points.size(), 250u) << l.name;
    }
    // The verdict's step (15) is drawn though the stride passes it by.
    const auto jump = std::find_if(p.series.begin(), p.series.end(), [](const panel_series& l) {
        return l.name.find("ring") != std::string::npos && l.name.find("P=4") != std::string::npos;
    });
    ASSERT_NE(jump, p.series.end());
    EXPECT_TRUE(std::any_of(jump->points.begin(), jump->points.end(),
                            [](const panel_point& pt) { return pt.x == 15; }));
    std::filesystem::remove_all(dir);
}
