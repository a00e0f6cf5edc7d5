// Options declared once (src/engine/options.hpp) and the sweep the engine expands from them
// (src/engine/sweep.hpp): every value typed and checked before any plan(), lists only where
// an option sweeps, named lists, the product in declaration order, the cap on cases.
#include "jobs/registry.hpp"
#include "src/base/error.hpp"
#include "src/engine/options.hpp"
#include "src/engine/sweep.hpp"

#include <chrono>
#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::jobs;

namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

const named_lists& sizes() {
    static const named_lists lists = {{"small", {"1K", "2K"}}, {"large", {"1M"}}};
    return lists;
}

std::vector<option_decl> decls() {
    return {option_decl::size("len", "4K", 1, 1 << 30).sweeps().help("a length"),
            option_decl::choice("preset", "", {"small", "large"})
                .sweeps()
                .names_lists_of("len", sizes()),
            option_decl::choice("mode", "a", {"a", "b"}).sweeps(),
            option_decl::integer("count", "3", -2, 10),
            option_decl::number("rate", "0.5", 0, 1),
            option_decl::flag("check", "on").also({"auto"}),
            option_decl::text("name", "")};
}

} // namespace

TEST(options, values_are_typed_and_checked_against_the_declaration) {
    const auto d = decls();
    EXPECT_EQ(std::get<std::uint64_t>(parse_value(d[0], "2K").value), 2048u);
    EXPECT_EQ(parse_value(d[0], "2K").text, "2K"); // the identity keeps what was written
    EXPECT_EQ(std::get<std::int64_t>(parse_value(d[3], "-2").value), -2);
    EXPECT_DOUBLE_EQ(std::get<double>(parse_value(d[4], "1e-3").value), 1e-3);
    EXPECT_EQ(std::get<bool>(parse_value(d[5], "off").value), false);
    EXPECT_EQ(std::get<std::string>(parse_value(d[5], "auto").value), "auto");
    EXPECT_EQ(std::get<std::string>(parse_value(d[2], "b").value), "b");
    EXPECT_EQ(error_of([&] { parse_value(d[0], "0"); }), "--len: 0 is out of range (1 to 1G)");
    EXPECT_EQ(error_of([&] { parse_value(d[0], "4611686018427387904"); }),
              "--len: 4611686018427387904 is out of range (1 to 1G)");
    EXPECT_EQ(error_of([&] { parse_value(d[3], "11"); }), "--count: 11 is out of range (-2 to 10)");
    EXPECT_EQ(error_of([&] { parse_value(d[3], "4294967298"); }),
              "--count: 4294967298 is out of range (-2 to 10)");
    EXPECT_EQ(error_of([&] { parse_value(d[4], "nan"); }), "--rate: 'nan' is not a number");
    EXPECT_EQ(error_of([&] { parse_value(d[2], "c"); }), "--mode: 'c' is not one of a, b");
    EXPECT_EQ(error_of([&] { parse_value(d[5], "maybe"); }), "--check: 'maybe' is not on/off");
    EXPECT_NE(error_of([&] { parse_value(d[3], "1.5"); }).find("not a whole number"),
              std::string::npos);
}

// A number is one case however it was written (0x0.8p0, 0.50, 5e-1 are 0.5; a value
// below the smallest double is 0), so cases pool by value, not by spelling.
TEST(options, numbers_are_recorded_in_canonical_form) {
    const auto d = decls();
    for (const char* same : {"0.5", "0x0.8p0", "0.50", "5e-1", " 0.5"})
        EXPECT_EQ(parse_value(d[4], same).text, "0.5") << same;
    EXPECT_EQ(parse_value(d[4], "1e-400").text, "0");
    EXPECT_EQ(parse_value(d[4], "-0").text, "0");
    EXPECT_EQ(parse_value(d[4], "0.001").text, "0.001");
    EXPECT_EQ(parse_value(d[4], "1").text, "1");
    EXPECT_EQ(parse_value(d[0], "4K").text, "4K"); // sizes keep their spelling (as before)
}

TEST(options, help_shows_the_range_or_the_values_and_whether_a_list_sweeps) {
    const auto d = decls();
    EXPECT_EQ(describe_values(d[0]), "(1 to 1G; a list sweeps)");
    EXPECT_EQ(describe_values(d[1]),
              "(small: 1K,2K | large: 1M; each a list of --len; a list sweeps)");
    EXPECT_EQ(describe_values(d[3]), "(-2 to 10)");
    EXPECT_EQ(describe_values(d[4]), "(0 to 1)");
    EXPECT_EQ(describe_values(d[5]), "(on|off|auto)");
    EXPECT_EQ(describe_values(d[6]), "");
}

TEST(sweep, expands_in_declaration_order_with_defaults) {
    const auto points = expand_sweep(decls(), {{"len", {"1K", "2K"}}, {"mode", {"a", "b"}}});
    ASSERT_EQ(points.size(), 4u);
    EXPECT_EQ(points[0].text("len"), "1K"); // the first declared option varies slowest
    EXPECT_EQ(points[1].text("mode"), "b");
    EXPECT_EQ(points[2].size("len"), 2048u);
    EXPECT_EQ(points[3].integer("count"), 3); // defaults fill what was not given
    EXPECT_DOUBLE_EQ(points[3].number("rate"), 0.5);
    EXPECT_TRUE(points[3].flag("check"));
    EXPECT_FALSE(points[3].has("name")); // no default: absent
    EXPECT_FALSE(points[3].has("preset"));
    EXPECT_THROW(points[0].flag("len"), std::logic_error); // a typed value, never re-parsed
}

TEST(sweep, a_named_list_replaces_its_options_list) {
    const auto points = expand_sweep(decls(), {{"len", {"8K"}}, {"preset", {"small", "large"}}});
    ASSERT_EQ(points.size(), 3u);
    EXPECT_EQ(points[0].text("len"), "1K");
    EXPECT_EQ(points[2].size("len"), 1u << 20);
    EXPECT_EQ(points[1].get("len").from_list, "preset");
    EXPECT_FALSE(points[0].has("preset"));
    EXPECT_EQ(expand_sweep(decls(), {{"len", {"8K"}}})[0].get("len").from_list, "");
    EXPECT_EQ(error_of([&] {
                  expand_sweep(decls(), {{"preset", {"huge"}}});
              }),
              "--preset: 'huge' is not one of small, large");
    // An option without default, not given, still takes the named list's values.
    const std::vector<option_decl> d = {option_decl::size("len", "", 1, 1 << 30).sweeps(),
                                        option_decl::choice("preset", "", {"small", "large"})
                                            .sweeps()
                                            .names_lists_of("len", sizes())};
    const auto listed = expand_sweep(d, {{"preset", {"small"}}});
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(listed[1].size("len"), 2048u);
}

TEST(sweep, a_list_is_refused_where_an_option_does_not_sweep) {
    EXPECT_EQ(error_of([&] {
                  expand_sweep(decls(), {{"count", {"1", "2"}}});
              }),
              "--count: takes one value, not a list");
    EXPECT_EQ(error_of([&] {
                  expand_sweep(decls(), {{"mode", {"a", "z"}}});
              }),
              "--mode: 'z' is not one of a, b");
}

TEST(sweep, the_number_of_cases_is_capped_before_anything_is_expanded) {
    std::vector<std::string> many;
    for (int i = 1; i <= 300; ++i)
        many.push_back(std::to_string(i));
    const std::vector<option_decl> d = {option_decl::size("a", "1", 1, 1000).sweeps(),
                                        option_decl::size("b", "1", 1, 1000).sweeps(),
                                        option_decl::size("c", "1", 1, 1000).sweeps()};
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of([&] {
                  expand_sweep(d, {{"a", many}, {"b", many}, {"c", many}});
              }),
              "the sweep plans 27000000 cases; one launch plans at most 100000: shorten the "
              "lists or split them over several launches");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_EQ(check_sweep(d, {{"a", many}, {"b", many}}), 90000u);
    EXPECT_NO_THROW(check_case_count(100000, 1));
    EXPECT_NE(error_of([] { check_case_count(1000, 101); }).find("101000 cases with --repeat"),
              std::string::npos);
    EXPECT_NE(error_of([] { check_case_count(UINT64_MAX, 2); }).find("more than"),
              std::string::npos);
}

TEST(sweep, every_numeric_option_of_every_job_has_a_range) {
    for (const auto& j : all_jobs())
        for (const option_decl& d : j->options()) {
            const bool numeric = d.type == option_type::integer || d.type == option_type::size ||
                                 d.type == option_type::number;
            if (numeric) {
                EXPECT_LT(d.min_value, d.max_value) << j->name() << " --" << d.name;
                EXPECT_LE(d.max_value, 9.3e18) << j->name() << " --" << d.name; // int64
            }
            if (d.type == option_type::choice) {
                EXPECT_FALSE(d.values.empty()) << j->name() << " --" << d.name;
            }
            if (!d.default_value.empty()) {
                EXPECT_NO_THROW(parse_value(d, d.default_value)) << j->name() << " --" << d.name;
            }
        }
}
