// ringscale-stats run in the test's own process: a command line parsed as main() parses it,
// and a command run to its JSON output.
#pragma once

#include "analysis/commands/command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace ringscale::test_fixture {

/// `ringscale-stats ARGS...` parsed (throws what parse_cli throws).
inline analysis::parsed_cli parse_stats(std::vector<std::string> args) {
    args.insert(args.begin(), "ringscale-stats");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    return analysis::parse_cli(static_cast<int>(argv.size()), argv.data());
}

/// `ringscale-stats ARGS...` (ARGS asking for --format json) run: a failed expectation unless
/// it exits 0, then what it printed, parsed.
inline nlohmann::json stats_json(const std::vector<std::string>& args) {
    std::ostringstream out;
    EXPECT_EQ(analysis::run_command(parse_stats(args), out), 0);
    return nlohmann::json::parse(out.str());
}

} // namespace ringscale::test_fixture
