// The subcommands of ringscale-stats (analysis/commands/command.hpp): the table, the dispatcher's
// help and refusals, and a new subcommand as one file and one table line: example_command.cpp,
// the example DESIGN.md shows (the last test checks DESIGN.md quotes it as compiled here).
#include "analysis/commands/command.hpp"
#include "analysis_fixture.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>

namespace ringscale::analysis {
std::unique_ptr<subcommand> make_launches_command(); // example_command.cpp
} // namespace ringscale::analysis

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_file;

namespace {

constexpr auto npos = std::string::npos;

parsed_cli parse(std::vector<std::string> args,
                 const std::vector<command_factory>& table = command_table()) {
    args.insert(args.begin(), "ringscale-stats");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    return parse_cli(static_cast<int>(argv.size()), argv.data(), table);
}

/// The config_error parsing `args` raises; "" when none.
std::string refusal(const std::vector<std::string>& args,
                    const std::vector<command_factory>& table = command_table()) {
    try {
        parse(args, table);
    } catch (const ringscale::config_error& e) {
        return e.what();
    }
    return "";
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

} // namespace

TEST(analysis_commands, each_subcommand_has_a_name_a_line_of_help_and_its_options) {
    std::set<std::string> names;
    const std::string help = tool_help();
    for (const command_factory make : command_table()) {
        const auto c = make();
        EXPECT_TRUE(names.insert(c->name()).second) << c->name() << " is in the table twice";
        EXPECT_EQ(std::string(c->help()).find('\n'), npos) << c->name();
        // Wrapped at 100 columns under its name: joined again, the line it was.
        std::string joined;
        for (std::size_t at = 0; at < help.size(); ++at)
            joined += help.compare(at, 13, "\n            ") == 0 ? (at += 12, ' ') : help[at];
        EXPECT_NE(joined.find(fmt::format("  {:<9} {}\n", c->name(), c->help())), npos) << help;
        const parsed_cli p = parse({c->name(), "--help"});
        EXPECT_FALSE(p.command);
        EXPECT_EQ(
            p.help_text.rfind(
                fmt::format("ringscale-stats {} [options] {}\n", c->name(), c->arguments()), 0),
            0u)
            << p.help_text;
        EXPECT_NE(p.help_text.find("--strict"), npos) << p.help_text;
    }
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);)
        EXPECT_LE(line.size(), 100u) << line;
    EXPECT_EQ(names, (std::set<std::string>{"summary", "scaling", "model", "crossover", "compare",
                                            "export", "report", "profile", "predict", "accuracy",
                                            "numerics", "history", "trace", "overlap"}));
}

TEST(analysis_commands, a_subcommand_has_only_its_own_options) {
    EXPECT_NE(parse({"export", "--help"}).help_text.find("--csv"), npos);
    EXPECT_EQ(parse({"summary", "--help"}).help_text.find("--csv"), npos);
    EXPECT_EQ(refusal({"summary", "--csv", "x.csv", "in.h5"}).rfind("summary: ", 0), 0u);
    EXPECT_EQ(refusal({"scaling", "--threshold", "5", "in.h5"}).rfind("scaling: ", 0), 0u);
    EXPECT_EQ(refusal({"compare", "--threshold", "-5", "a.h5", "b.h5"}),
              "--threshold must be a change of 0% or more");
    EXPECT_EQ(refusal({"frobnicate", "in.h5"}), "unknown command 'frobnicate' (try --help)");
    EXPECT_EQ(refusal({}), "no command given (try --help)");
    EXPECT_EQ(refusal({"profile"}), "profile: no input files given");
}

TEST(analysis_commands, a_new_subcommand_is_one_file_and_one_table_line) {
    std::vector<command_factory> table = command_table();
    table.push_back(&make_launches_command); // the one table line (commands.inc)
    EXPECT_NE(tool_help(table).find("  launches  The cases and launches of each job.\n"), npos);
    EXPECT_NE(parse({"launches", "--help"}, table).help_text.find("--job arg"), npos);
    EXPECT_EQ(refusal({"launches"}, table), "launches: no input files given");
    EXPECT_NE(refusal({"launches", "--format", "xml", "in.h5"}, table).find("xml"), npos);
    EXPECT_EQ(refusal({"launches", "in.h5"}), "unknown command 'launches' (try --help)");

    const std::string dir = ringscale::test_fixture::fixture_dir("commands_launches");
    for (int launch : {0, 1}) {
        fixture_file f;
        f.cases.resize(2);
        f.cases[1].job = "collectives";
        f.cases[1].variant = "allreduce";
        f.git_commit = fmt::format("launch{}", launch);
        write_fixture_file(fmt::format("{}/l{}.h5", dir, launch), f);
    }
    std::ostringstream out;
    ASSERT_EQ(run_command(parse({"launches", "--format", "csv", dir}, table), out), 0);
    EXPECT_EQ(out.str(), "job,cases,launches\ncollectives,1,2\nring_attention,1,2\n");
    out.str("");
    ASSERT_EQ(run_command(
                  parse({"launches", "--job", "collectives", "--format", "csv", dir}, table), out),
              0);
    EXPECT_EQ(out.str(), "job,cases,launches\ncollectives,1,2\n");
}

TEST(analysis_commands, design_md_shows_the_example_as_compiled_here) {
    const std::string example = slurp(RINGSCALE_SOURCE_DIR "/tests/analysis/example_command.cpp");
    const std::string design = slurp(RINGSCALE_SOURCE_DIR "/DESIGN.md");
    ASSERT_GT(example.size(), 500u);
    EXPECT_NE(design.find(example), npos)
        << "DESIGN.md (Adding a subcommand) no longer quotes tests/analysis/example_command.cpp";
    EXPECT_NE(design.find("RINGSCALE_STATS_COMMAND(launches)"), npos);
}
