// The history index's reader (analysis/history/file_summaries): a summary crosses the pipe
// whole and exact (NaN, any bytes), a reply cut anywhere is refused, and the pooled children
// give what an in-process read gives, in the order asked, with an unreadable file named.
#include "analysis/history/file_summaries.hpp"

#include "analysis/reading/reader.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>

using namespace ringscale;
using namespace ringscale::analysis::history;

namespace {

file_summary sample() {
    file_summary s;
    launch_record l;
    l.launch = "id:abc";
    l.path = std::string("/tmp/odd\xff\x01 name.h5", 18);
    l.created_utc = "2025-01-01T00:00:00Z";
    l.time_s = 1735689600;
    l.git_commit = "deadbeef";
    l.complete = false;
    l.meta = {{"label.commit", "c00001"}, {"mpi_library", "Open MPI"}, {"empty", ""}};
    s.launch = l;
    launch_case c;
    c.launch = l.launch;
    c.key = "ring_attention/zigzag P=4 'quoted'; DROP TABLE cases";
    c.label = "ring_attention/zigzag P=4";
    c.iterations = 20;
    c.step_s = 1.25e-3;
    c.compute_s = std::numeric_limits<double>::quiet_NaN();
    c.comm_s = 3e-4;
    c.wait_s = 0;
    c.memory_bytes = 1048576;
    c.machine = "throttled";
    s.cases = {c, c};
    s.cases[1].key += " 2";
    return s;
}

void expect_same(const launch_case& a, const launch_case& b) {
    EXPECT_EQ(a.launch, b.launch);
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.label, b.label);
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_EQ(a.machine, b.machine);
    for (auto [x, y] : {std::pair{a.step_s, b.step_s},
                        {a.compute_s, b.compute_s},
                        {a.comm_s, b.comm_s},
                        {a.wait_s, b.wait_s},
                        {a.memory_bytes, b.memory_bytes}})
        EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << x << " vs " << y;
}

} // namespace

TEST(history_summaries, a_summary_crosses_whole_and_exact) {
    const file_summary s = sample();
    const auto back = decode_summary(encode_summary(s));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->problem, "");
    ASSERT_TRUE(back->launch);
    EXPECT_EQ(back->launch->path, s.launch->path);
    EXPECT_EQ(back->launch->time_s, s.launch->time_s);
    EXPECT_FALSE(back->launch->complete);
    EXPECT_EQ(back->launch->meta, s.launch->meta);
    ASSERT_EQ(back->cases.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i)
        expect_same(back->cases[i], s.cases[i]);

    const file_summary bad{"not a readable HDF5 file", std::nullopt, {}};
    const auto problem = decode_summary(encode_summary(bad));
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->problem, bad.problem);
    EXPECT_FALSE(problem->launch);
    EXPECT_TRUE(problem->cases.empty());
}

TEST(history_summaries, a_reply_cut_or_padded_anywhere_is_refused) {
    const std::string bytes = encode_summary(sample());
    for (std::size_t n = 0; n < bytes.size(); ++n)
        EXPECT_FALSE(decode_summary(bytes.substr(0, n))) << "cut at " << n;
    EXPECT_FALSE(decode_summary(bytes + "x"));
    std::string huge = bytes;
    huge[0] = '\xff'; // the problem's length: far past the end
    EXPECT_FALSE(decode_summary(huge));
}

TEST(history_summaries, the_children_read_as_the_process_would_in_order) {
    const std::string dir = test_fixture::fixture_dir("history_summaries");
    std::vector<std::string> paths;
    for (int i = 0; i < 5; ++i) {
        test_fixture::fixture_file f;
        f.launch_id = "launch" + std::to_string(i);
        f.labels = {{"commit", "c" + std::to_string(i)}};
        for (int p : {2, 4}) {
            test_fixture::fixture_case c;
            c.world_size = p;
            c.base_time_s = 1e-3 * (i + 1);
            c.seed = static_cast<std::uint64_t>(10 * i + p);
            f.cases.push_back(c);
        }
        paths.push_back(dir + "/launch_" + std::to_string(i) + ".h5");
        test_fixture::write_fixture_file(paths.back(), f);
    }
    std::ofstream(dir + "/junk.h5") << std::string(4096, '\x5a');
    paths.insert(paths.begin() + 2, dir + "/junk.h5");
    paths.push_back(dir + "/absent.h5");

    const std::vector<file_summary> got = read_summaries(paths, 3);
    ASSERT_EQ(got.size(), paths.size());
    EXPECT_NE(got[2].problem, "");
    EXPECT_FALSE(got[2].launch);
    EXPECT_NE(got.back().problem, "");
    for (std::size_t i = 0; i < paths.size(); ++i) {
        if (i == 2 || i + 1 == paths.size())
            continue;
        SCOPED_TRACE(paths[i]);
        const auto cases = analysis::read_results_file(paths[i]);
        const launch_record want = describe_launch(*cases.front().file);
        const std::vector<launch_case> rows = summarize_launch(cases);
        EXPECT_EQ(got[i].problem, "");
        ASSERT_TRUE(got[i].launch);
        EXPECT_EQ(got[i].launch->launch, want.launch);
        EXPECT_EQ(got[i].launch->meta, want.meta);
        ASSERT_EQ(got[i].cases.size(), rows.size());
        for (std::size_t k = 0; k < rows.size(); ++k)
            expect_same(got[i].cases[k], rows[k]);
    }
    std::filesystem::remove_all(dir);
}

TEST(history_summaries, a_crash_inside_a_batch_costs_only_its_file) {
    // 12 files and one reader: its children read batches of 3 (a fork and a fresh heap per
    // file were half the time). The second file crashes HDF5: that child's first summary is
    // kept, the crash is the second file's reason alone, and the third is read again.
    const std::string dir = test_fixture::fixture_dir("history_batches");
    std::vector<std::string> paths;
    for (int i = 0; i < 11; ++i) {
        test_fixture::fixture_file f;
        f.launch_id = "batch" + std::to_string(i);
        f.cases.push_back({});
        f.cases.back().seed = static_cast<std::uint64_t>(i + 1);
        paths.push_back(dir + "/launch_" + std::to_string(i) + ".h5");
        test_fixture::write_fixture_file(paths.back(), f);
    }
    paths.insert(paths.begin() + 1, std::string(RINGSCALE_TEST_DATA_DIR) + "/hostile/flip_005.h5");
    const std::vector<file_summary> got = read_summaries(paths, 1);
    ASSERT_EQ(got.size(), 12u);
    EXPECT_NE(got[1].problem.find("crashed the HDF5 library"), std::string::npos) << got[1].problem;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (i == 1)
            continue;
        EXPECT_EQ(got[i].problem, "") << paths[i];
        ASSERT_TRUE(got[i].launch) << paths[i];
        EXPECT_EQ(got[i].launch->launch,
                  describe_launch(*analysis::read_results_file(paths[i]).front().file).launch);
    }
    std::filesystem::remove_all(dir);
}

TEST(history_summaries, a_read_past_its_limit_is_to_be_read_again) {
    // A base of a thousandth of a second: a 5 MB launch cannot be read in its 2 ms of CPU.
    const std::string dir = test_fixture::fixture_dir("history_slow_read");
    test_fixture::fixture_file f;
    f.cases.push_back({});
    f.cases.back().iterations = 100000;
    const std::string path = dir + "/slow.h5";
    test_fixture::write_fixture_file(path, f);
    const std::vector<file_summary> slow = read_summaries({path}, 1, {}, 0.001);
    ASSERT_EQ(slow.size(), 1u);
    EXPECT_TRUE(slow[0].retry);
    EXPECT_FALSE(slow[0].launch);
    EXPECT_NE(slow[0].problem.find("s of CPU time: read again next run"), std::string::npos)
        << slow[0].problem;
    const std::vector<file_summary> read = read_summaries({path}, 1);
    EXPECT_FALSE(read[0].retry);
    EXPECT_EQ(read[0].problem, "");
    EXPECT_TRUE(read[0].launch);
    std::filesystem::remove_all(dir);
}
