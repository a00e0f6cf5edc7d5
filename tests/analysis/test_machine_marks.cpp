// The machine marks as the tables show them: `summary` gives every case a machine
// column (CSV: machine_marks, whatever the data), `scaling` notes a marked case and an
// oversubscribed one (more threads than cores: an efficiency limited by it) beside its row.
#include "analysis/commands/command.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

/// `ringscale-stats ARGS...`: its output (exit status 0 asserted).
std::string run(std::vector<std::string> args) {
    args.insert(args.begin(), "ringscale-stats");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    std::ostringstream out;
    EXPECT_EQ(run_command(parse_cli(static_cast<int>(argv.size()), argv.data()), out), 0);
    return out.str();
}

/// A study at P = 1, 2, 4 on 2 cores, one thread per rank: P=2 measured beside a busy loop
/// (other processes used 0.9 of the 2 cores), P=4 oversubscribed (4 threads on 2 cores).
std::string study(const char* tag) {
    const std::string dir = ringscale::test_fixture::fixture_dir(tag);
    fixture_file f;
    for (int p : {1, 2, 4}) {
        fixture_case c;
        c.world_size = p;
        c.base_time_s = 1e-3 / std::min(p, 2);
        c.affinity_cores = 2;
        c.seed = static_cast<std::uint64_t>(p);
        if (p == 2)
            c.machine = {{"foreign_load", {0.9, 0.9}},
                         {"load_resolution", {0.01, 0.01}},
                         {"load_cores", {2, 2}}};
        f.cases.push_back(c);
    }
    write_fixture_file(dir + "/study.h5", f);
    return dir;
}

} // namespace

TEST(analysis_machine_marks, summary_has_a_machine_column_whatever_the_data) {
    const std::string dir = study("marks_summary");
    const std::string csv = run({"summary", "--format", "csv", dir});
    std::istringstream lines(csv);
    std::string header, row;
    std::getline(lines, header);
    EXPECT_NE(header.find("machine_marks"), std::string::npos) << header;
    std::size_t marked = 0, rows = 0;
    while (std::getline(lines, row)) {
        ++rows;
        marked += row.find("contended 1/1") != std::string::npos;
    }
    EXPECT_EQ(rows, 3u);
    EXPECT_EQ(marked, 1u) << csv; // P=2 only
    std::filesystem::remove_all(dir);
}

TEST(analysis_machine_marks, scaling_notes_marked_and_oversubscribed_points) {
    const std::string dir = study("marks_scaling");
    const std::string text = run({"scaling", "--bootstrap", "200", dir});
    EXPECT_NE(text.find("contended 1/1 (contended: other processes used 0.90 of the 2 core(s)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("oversubscribed: 4 rank(s) x 1 thread(s) = 4 threads on 2 core(s): ranks "
                        "wait for a core, so an efficiency cannot pass 0.50"),
              std::string::npos)
        << text;
    // P=1 and P=2 fit their cores: one oversubscription note only.
    EXPECT_EQ(text.find("oversubscribed", text.find("oversubscribed") + 1), std::string::npos);
    std::filesystem::remove_all(dir);
}
