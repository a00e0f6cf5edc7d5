// `ringscale-stats model` on a synthetic (P, S) study in fixture files: the two-parameter
// model recovers the planted terms, --predict p=..,S=.. gives a band, and the single-P form
// still works beside it.
#include "analysis/commands/command.hpp"
#include "src/base/error.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

/// t = a + b*S^2/p + c*S*log2(p): attention's work split over p, and a ring's log2(p) steps.
double planted(double p, double s) {
    return 2e-3 + 3e-10 * s * s / p + 4e-8 * s * std::log2(p);
}

std::string study_dir() {
    const std::string dir = ringscale::test_fixture::fixture_dir("model_multi");
    fixture_file f;
    for (int p : {1, 2, 4, 8, 16})
        for (std::int64_t s : {1024, 2048, 4096, 8192}) {
            fixture_case c;
            c.world_size = p;
            c.int_params = {{"seq_len", s}, {"heads", 8}};
            c.base_time_s = planted(p, static_cast<double>(s));
            c.noise = 0.005;
            c.iterations = 15;
            c.seed = static_cast<std::uint64_t>(p * 100000 + s);
            f.cases.push_back(c);
        }
    write_fixture_file(dir + "/study.h5", f);
    return dir;
}

parsed_cli parse(std::vector<std::string> args) {
    args.insert(args.begin(), "ringscale-stats");
    std::vector<const char*> argv;
    for (auto& a : args)
        argv.push_back(a.c_str());
    return parse_cli(static_cast<int>(argv.size()), argv.data());
}

} // namespace

TEST(analysis_model_multi, recovers_the_planted_terms_from_files) {
    const std::string dir = study_dir();
    const parsed_cli o = parse({"model", dir, "--format", "json", "--bootstrap", "200", "--predict",
                                "p=64,S=16K;p=4,S=4K"});
    std::ostringstream out;
    ASSERT_EQ(run_command(o, out), 0);
    const auto j = nlohmann::json::parse(out.str());
    const auto& models = j.at("models of p and S");
    ASSERT_EQ(models.size(), 1u) << out.str();
    const std::string formula = models[0].at("formula");
    EXPECT_NE(formula.find("* S^(2) * p^(-1)"), std::string::npos) << formula;
    EXPECT_NE(formula.find("* S * log2(p)"), std::string::npos) << formula;
    std::size_t terms = 0;
    for (std::size_t at = formula.find(" + "); at != std::string::npos;
         at = formula.find(" + ", at + 1))
        ++terms;
    for (std::size_t at = formula.find(" - "); at != std::string::npos;
         at = formula.find(" - ", at + 1))
        ++terms;
    EXPECT_EQ(terms, 2u) << formula; // the constant and exactly two terms
    const auto& preds = j.at("predictions of p and S");
    ASSERT_EQ(preds.size(), 2u);
    EXPECT_EQ(preds[0].at("world_size"), 64);
    EXPECT_EQ(preds[0].at("seq_len"), 16384);
    const double truth = planted(64, 16384);
    EXPECT_NEAR(preds[0].at("predicted_s").get<double>(), truth, 0.05 * truth);
    EXPECT_LE(preds[0].at("band_lo_s").get<double>(), preds[0].at("predicted_s").get<double>());
    EXPECT_GE(preds[0].at("band_hi_s").get<double>(), preds[0].at("predicted_s").get<double>());
    EXPECT_EQ(preds[0].at("extrapolated"), "yes");
    EXPECT_EQ(preds[1].at("extrapolated"), "no");
}

TEST(analysis_model_multi, single_parameter_predictions_still_work) {
    const std::string dir = study_dir();
    const parsed_cli o =
        parse({"model", dir, "--format", "json", "--bootstrap", "100", "--predict", "8,64"});
    std::ostringstream out;
    ASSERT_EQ(run_command(o, out), 0);
    const auto j = nlohmann::json::parse(out.str());
    EXPECT_EQ(j.at("models").size(), 4u); // one t(p) family per S
    ASSERT_EQ(j.at("predictions").size(), 8u);
    EXPECT_EQ(j.at("predictions")[0].at("world_size"), 8);
    EXPECT_EQ(j.at("predictions")[1].at("world_size"), 64);
    EXPECT_EQ(j.at("models of p and S").size(), 1u);
}

TEST(analysis_model_multi, bad_prediction_points_are_refused) {
    EXPECT_THROW(parse({"model", "x.h5", "--predict", "p=64"}), ringscale::config_error);
    EXPECT_THROW(parse({"model", "x.h5", "--predict", "p=64,T=3"}), ringscale::config_error);
    EXPECT_THROW(parse({"model", "x.h5", "--predict", "p=0,S=1K"}), ringscale::config_error);
}

TEST(analysis_model_multi, report_lists_the_two_parameter_model) {
    const std::string dir = study_dir();
    const std::string out_dir = dir + "/report";
    const parsed_cli o = parse({"report", "--bootstrap", "100", out_dir, dir});
    std::ostringstream out;
    ASSERT_EQ(run_command(o, out), 0);
    std::ifstream f(out_dir + "/report.md");
    std::stringstream md;
    md << f.rdbuf();
    EXPECT_NE(md.str().find("Two-parameter models t(p, S)"), std::string::npos);
    EXPECT_NE(md.str().find("S^(2) * p^(-1)"), std::string::npos);
}

TEST(analysis_model_multi, model_predict_on_a_three_point_study_prints_no_negative_time) {
    // A train_step study at P = 1, 2, 4 whose times flatten out; plain
    // leave-one-out selection extrapolated it to a negative time at P=64.
    const std::string dir = ringscale::test_fixture::fixture_dir("model_three_point");
    fixture_file f;
    const double base[] = {10, 9.5, 8};
    for (int i = 0; i < 3; ++i) {
        fixture_case c;
        c.job = "train_step";
        c.variant = "zero1";
        c.world_size = 1 << i;
        c.int_params = {{"layers", 4}, {"hidden", 512}};
        c.base_time_s = base[i];
        c.noise = 0.02;
        c.seed = static_cast<std::uint64_t>(7 + i);
        f.cases.push_back(c);
    }
    write_fixture_file(dir + "/study.h5", f);
    for (const char* format : {"json", "text"}) {
        const parsed_cli o = parse(
            {"model", dir, "--format", format, "--bootstrap", "200", "--predict", "8,64,1024"});
        std::ostringstream out;
        ASSERT_EQ(run_command(o, out), 0);
        if (std::string(format) == "text") {
            // No time in the predictions table is negative: no "-<digit>" after the header.
            const std::string text = out.str();
            const std::string table = text.substr(text.find("predicted"));
            for (std::size_t at = table.find('-'); at != std::string::npos;
                 at = table.find('-', at + 1))
                EXPECT_FALSE(at + 1 < table.size() && std::isdigit(table[at + 1]) &&
                             (at == 0 || table[at - 1] == ' ' || table[at - 1] == '['))
                    << table;
            for (const char* bad : {"nan", "inf", "NaN", "Inf"}) // nor a non-finite one
                EXPECT_EQ(table.find(bad), std::string::npos) << table;
            continue;
        }
        const auto j = nlohmann::json::parse(out.str());
        const auto& preds = j.at("predictions");
        ASSERT_EQ(preds.size(), 3u);
        EXPECT_GT(preds[0].at("predicted_s").get<double>(), 0);
        EXPECT_GT(preds[0].at("band_lo_s").get<double>(), 0);
        for (int i : {1, 2}) {
            EXPECT_TRUE(preds[i].at("predicted_s").is_null()) << preds[i];
            EXPECT_NE(preds[i].at("extrapolated").get<std::string>().find("not predicted"),
                      std::string::npos);
        }
    }
}
