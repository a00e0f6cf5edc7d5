#include "analysis/comparisons/compare.hpp"
#include "analysis/reading/reader.hpp"
#include "src/base/error.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <filesystem>
#include <gtest/gtest.h>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

/// One launch: three cases (P = 1, 2, 4) of 200 iterations, log-normal noise of 3%; every
/// case of the launch is `launch_offset` slower (launch-to-launch noise).
fixture_file launch(std::uint64_t seed, double slowdown, std::int64_t seq_len = 4096,
                    double launch_offset = 0) {
    fixture_file f;
    for (int p : {1, 2, 4}) {
        fixture_case c;
        c.world_size = p;
        c.iterations = 200;
        c.noise = 0.03;
        c.base_time_s = 1e-3 * (1 + slowdown) * (1 + launch_offset) / p;
        c.int_params = {{"seq_len", seq_len}};
        c.seed = seed * 100 + static_cast<std::uint64_t>(p);
        f.cases.push_back(c);
    }
    return f;
}

struct sets {
    std::string dir;
    result_set base, next;
    std::vector<pooled_case> pb, pn;
    sets(const char* tag, const std::vector<fixture_file>& a, const std::vector<fixture_file>& b)
        : dir(ringscale::test_fixture::fixture_dir(tag)) {
        std::filesystem::create_directories(dir + "/base");
        std::filesystem::create_directories(dir + "/new");
        for (std::size_t i = 0; i < a.size(); ++i)
            write_fixture_file(dir + "/base/" + std::to_string(i) + ".h5", a[i]);
        for (std::size_t i = 0; i < b.size(); ++i)
            write_fixture_file(dir + "/new/" + std::to_string(i) + ".h5", b[i]);
        base = load_results({dir + "/base"}, true);
        next = load_results({dir + "/new"}, true);
        pb = pool_cases(base.cases);
        pn = pool_cases(next.cases);
    }
    ~sets() { std::filesystem::remove_all(dir); }
};

} // namespace

TEST(analysis_compare, a_a_comparison_is_not_a_regression) {
    for (std::uint64_t seed : {2u, 3u, 4u, 5u, 6u}) {
        sets s("compare_aa", {launch(1, 0)}, {launch(seed, 0)});
        const comparison cmp = compare_sets(s.pb, s.pn, {});
        ASSERT_EQ(cmp.matched.size(), 3u);
        EXPECT_FALSE(cmp.any_regression()) << "seed " << seed;
        for (const auto& c : cmp.matched) {
            EXPECT_LT(std::abs(c.change), 0.05);
            EXPECT_EQ(c.unit, "iterations");
            EXPECT_EQ(c.n_base, 200u);
        }
    }
}

TEST(analysis_compare, one_launch_per_side_never_calls_a_regression) {
    // A real 10% slowdown, but one launch per side: iterations alone cannot tell it from
    // launch-to-launch noise, so it is not decided (one launch), the one rule's verdict.
    sets s("compare_one", {launch(1, 0)}, {launch(2, 0.10)});
    const comparison cmp = compare_sets(s.pb, s.pn, {});
    ASSERT_EQ(cmp.matched.size(), 3u);
    EXPECT_FALSE(cmp.any_regression());
    EXPECT_EQ(cmp.iteration_level(), 3u);
    for (const auto& c : cmp.matched) {
        EXPECT_EQ(c.unit, "iterations");
        EXPECT_EQ(c.result, verdict::not_decided);
        EXPECT_EQ(c.reason, "one launch");
        EXPECT_NEAR(c.change, 0.10, 0.02);
        EXPECT_LT(c.p_adjusted, 1e-6); // what the iteration-level test alone would have called
    }
}

TEST(analysis_compare, detectability_needs_launches_on_both_sides) {
    sets s("compare_detect1", {launch(1, 0)}, {launch(2, 0), launch(3, 0)});
    const comparison cmp = compare_sets(s.pb, s.pn, {});
    for (const auto& c : cmp.matched)
        EXPECT_TRUE(std::isnan(c.detectable));
    EXPECT_EQ(detectability_note(cmp, 0.05, 0.05), "");
}

TEST(analysis_compare, noisy_launches_say_how_many_would_be_needed) {
    // Launch offsets of +-20%: 3 launches per side cannot see 10%; the note says how many could.
    const std::vector<double> noise = {-0.2, 0.0, 0.2};
    std::vector<fixture_file> a, b;
    for (std::size_t i = 0; i < 3; ++i) {
        a.push_back(launch(1 + i, 0, 4096, noise[i]));
        b.push_back(launch(11 + i, 0, 4096, noise[2 - i]));
    }
    sets s("compare_detect2", a, b);
    const comparison cmp = compare_sets(s.pb, s.pn, {});
    for (const auto& c : cmp.matched)
        EXPECT_GT(c.detectable, 0.10);
    const std::string note = detectability_note(cmp, 0.05, 0.05);
    EXPECT_NE(note.find("launches per side would detect 10%"), std::string::npos) << note;
}

TEST(analysis_compare, launch_noise_with_one_launch_per_side_is_not_a_regression) {
    // The same binary, two launches 8% apart (launch-level noise, no real change): the
    // iteration-level test is overwhelmingly "significant"; the verdict is not a regression.
    sets s("compare_noise", {launch(1, 0, 4096, -0.04)}, {launch(2, 0, 4096, 0.04)});
    const comparison cmp = compare_sets(s.pb, s.pn, {});
    EXPECT_FALSE(cmp.any_regression());
    for (const auto& c : cmp.matched) {
        EXPECT_LT(c.test.p_value, 1e-10);
        EXPECT_EQ(c.result, verdict::not_decided);
        EXPECT_EQ(c.reason, "one launch");
    }
}

TEST(analysis_compare, three_launches_per_side_call_a_real_ten_percent_shift) {
    // Launch noise of +-2% on both sides, a real 10% slowdown: the two-level bootstrap calls it.
    const std::vector<double> noise = {-0.02, 0.0, 0.02};
    std::vector<fixture_file> base, slow;
    for (std::size_t i = 0; i < noise.size(); ++i) {
        base.push_back(launch(1 + i, 0, 4096, noise[i]));
        slow.push_back(launch(11 + i, 0.10, 4096, noise[2 - i]));
    }
    sets s("compare_three", base, slow);
    const comparison cmp = compare_sets(s.pb, s.pn, {});
    ASSERT_EQ(cmp.matched.size(), 3u);
    EXPECT_TRUE(cmp.any_regression());
    EXPECT_EQ(cmp.iteration_level(), 0u);
    for (const auto& c : cmp.matched) {
        EXPECT_EQ(c.unit, "launches");
        EXPECT_EQ(c.n_base, 3u);
        EXPECT_EQ(c.result, verdict::regression);
        EXPECT_NEAR(c.change, 0.10, 0.03);
        EXPECT_GT(c.change_lo, 0.0);
        EXPECT_LT(c.change_lo, c.change);
        EXPECT_GT(c.change_hi, c.change);
    }
    // Launch noise near 2%: the report says how small a change these launches can see.
    for (const auto& c : cmp.matched) {
        EXPECT_GT(c.launch_noise, 0.01);
        EXPECT_LT(c.launch_noise, 0.04);
        EXPECT_GT(c.detectable, 0.0);
        EXPECT_LT(c.detectable, c.change);
    }
    const std::string note = detectability_note(cmp, 0.05, 0.05);
    EXPECT_NE(note.find("90% power above"), std::string::npos) << note;
    // A 15% threshold: significant but within it, not a regression.
    compare_options loose;
    loose.threshold = 0.15;
    EXPECT_FALSE(compare_sets(s.pb, s.pn, loose).any_regression());
    // The other way round it is an improvement.
    EXPECT_EQ(compare_sets(s.pn, s.pb, {}).matched[0].result, verdict::improvement);
}

TEST(analysis_compare, three_launches_per_side_a_a_with_launch_noise_is_not_called) {
    // Same binary, launch offsets of up to +-4% on both sides, interleaved.
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        std::vector<fixture_file> a, b;
        const std::vector<double> noise = {-0.04, 0.01, 0.03, -0.01, 0.04, -0.03};
        for (std::size_t i = 0; i < 3; ++i) {
            a.push_back(launch(seed * 10 + i, 0, 4096, noise[2 * i]));
            b.push_back(launch(seed * 10 + 5 + i, 0, 4096, noise[2 * i + 1]));
        }
        sets s("compare_aa3", a, b);
        const comparison cmp = compare_sets(s.pb, s.pn, {});
        EXPECT_FALSE(cmp.any_regression()) << "seed " << seed;
        // Not a regression: the rule calls it a tie or leaves it not decided (within noise,
        // or not significant after Holm).
        for (const auto& c : cmp.matched)
            EXPECT_TRUE(c.result == verdict::unchanged || c.result == verdict::not_decided)
                << "seed " << seed << ": " << to_string(c.result) << " " << c.reason;
    }
}

TEST(analysis_compare, launches_are_the_unit_when_there_are_enough) {
    sets s("compare_launch", {launch(1, 0), launch(2, 0), launch(3, 0), launch(4, 0)},
           {launch(5, 0.1), launch(6, 0.1), launch(7, 0.1), launch(8, 0.1)});
    const comparison cmp = compare_sets(s.pb, s.pn, {});
    for (const auto& c : cmp.matched) {
        EXPECT_EQ(c.unit, "launches");
        EXPECT_EQ(c.n_new, 4u);
        EXPECT_EQ(c.launches_new, 4u);
        // Fully separated launches: no replicate ratio at or below 1, p = 2 / (B + 1).
        EXPECT_DOUBLE_EQ(c.p_value, 2.0 / 2001);
        EXPECT_EQ(c.result, verdict::regression);
    }
    // Demanding 5 launches per side leaves the same data not decided.
    compare_options five;
    five.min_launches = 5;
    const comparison strict = compare_sets(s.pb, s.pn, five);
    EXPECT_FALSE(strict.any_regression());
    EXPECT_EQ(strict.matched[0].result, verdict::not_decided);
    EXPECT_EQ(strict.matched[0].reason, "fewer than 5 launches");
}

TEST(analysis_compare, mismatched_parameters_are_an_error_naming_them) {
    sets s("compare_mismatch", {launch(1, 0, 4096)}, {launch(2, 0, 8192)});
    try {
        compare_sets(s.pb, s.pn, {});
        FAIL() << "expected config_error";
    } catch (const ringscale::config_error& e) {
        EXPECT_NE(std::string(e.what()).find("seq_len (4096 vs 8192)"), std::string::npos)
            << e.what();
    }
}

TEST(analysis_compare, unmatched_cases_are_listed) {
    fixture_file extra = launch(2, 0);
    extra.cases.pop_back(); // NEW lacks P = 4
    sets s("compare_partial", {launch(1, 0)}, {extra});
    const comparison cmp = compare_sets(s.pb, s.pn, {});
    EXPECT_EQ(cmp.matched.size(), 2u);
    ASSERT_EQ(cmp.only_base.size(), 1u);
    EXPECT_EQ(cmp.only_base[0]->world_size, 4);
}

namespace {

/// `f` measured beside a busy loop: other processes used 0.9 of the 2 cores on every rank
/// (the machine fields alone: the reader applies the rule, whatever the outcome says).
fixture_file contended(fixture_file f) {
    for (fixture_case& c : f.cases) {
        const auto w = static_cast<std::size_t>(c.world_size);
        c.machine = {{"foreign_load", std::vector<double>(w, 0.9)},
                     {"load_resolution", std::vector<double>(w, 0.01)},
                     {"load_cores", std::vector<double>(w, 2)}};
    }
    return f;
}

} // namespace

TEST(analysis_compare, a_marked_launch_weighs_by_its_effect) {
    // NEW 30% slower, every launch measured with other processes on 0.90 of the 2 cores (an
    // effect up to x1.91 on a one-thread rank, on its whole time: on the CPU communication
    // runs on the same cores): it could account for the margin, so
    // nothing is decided (the marked launches stay in the comparison, not left out).
    sets s("compare_marked", {launch(1, 0), launch(2, 0), launch(3, 0)},
           {contended(launch(4, 0.3)), contended(launch(5, 0.3)), contended(launch(6, 0.3))});
    const comparison cmp = compare_sets(s.pb, s.pn, {});
    ASSERT_EQ(cmp.matched.size(), 3u);
    EXPECT_FALSE(cmp.any_regression());
    EXPECT_EQ(cmp.undecided(), 3u);
    for (const case_comparison& c : cmp.matched) {
        EXPECT_EQ(c.result, verdict::not_decided);
        EXPECT_EQ(c.reason.rfind("marked: other processes used 0.90 of the 2 core(s) the ranks "
                                 "may use (x1.91) could account for the +",
                                 0),
                  0u)
            << "reason: " << c.reason;
        EXPECT_EQ(c.launches_new, 3u); // kept
        EXPECT_EQ(c.marked_base, 0u);
        EXPECT_EQ(c.marked_new, 3u);
        EXPECT_EQ(c.marked_why, "NEW contended 3/3 (contended: other processes used 0.90 of the 2 "
                                "core(s) the ranks may use (+-0.01))");
    }
    // --skip-marked: the old behaviour, every launch of NEW left out.
    compare_options skip;
    skip.skip_marked = true;
    for (const case_comparison& c : compare_sets(s.pb, s.pn, skip).matched)
        EXPECT_EQ(c.result, verdict::contended);
    EXPECT_STREQ(to_string(verdict::contended), "not decided (every launch marked)");
    // Two clean launches 30% slower beside a marked one: by default the mark still could
    // account for the margin; --skip-marked compares the clean ones and calls it.
    sets t("compare_part_marked", {launch(1, 0), launch(2, 0), launch(3, 0)},
           {launch(4, 0.3), launch(5, 0.3), contended(launch(6, 0.3))});
    const comparison part = compare_sets(t.pb, t.pn, {});
    for (const case_comparison& c : part.matched) {
        EXPECT_EQ(c.marked_new, 1u);
        EXPECT_EQ(c.result, verdict::not_decided);
    }
    EXPECT_TRUE(compare_sets(t.pb, t.pn, skip).any_regression());
}
