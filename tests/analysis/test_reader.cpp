#include "analysis/reading/reader.hpp"
#include "src/base/error.hpp"
#include "src/base/h5.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::analysis;
using test_fixture::fixture_case;
using test_fixture::fixture_file;

namespace {

fixture_case explicit_case() {
    fixture_case c;
    c.world_size = 2;
    c.warmup = 1;
    c.iterations = 3;
    // rows: warm-up, then three measured iterations; the step time is the slower rank's
    c.explicit_time_s = {9, 9, 1, 2, 4, 3, 5, 6};
    c.float_params = {{"flops_per_iter", 1e9}};
    return c;
}

std::string message_of(const std::string& path) {
    try {
        read_results_file(path);
    } catch (const ringscale::error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(analysis_reader, round_trip_from_fixture) {
    const std::string dir = test_fixture::fixture_dir("reader_rt");
    fixture_file f;
    f.cases = {explicit_case()};
    fixture_case skipped;
    skipped.status = "skipped";
    skipped.error = "does not fit";
    f.cases.push_back(skipped);
    write_fixture_file(dir + "/a.h5", f);
    const auto cases = read_results_file(dir + "/a.h5");
    ASSERT_EQ(cases.size(), 2u);
    const case_data& c = cases[0];
    EXPECT_EQ(c.group, "0000");
    EXPECT_EQ(c.job, "ring_attention");
    EXPECT_EQ(c.variant, "zigzag");
    EXPECT_EQ(c.world_size, 2);
    EXPECT_EQ(c.rows, 4u);
    EXPECT_EQ(c.world, 2u);
    EXPECT_EQ(c.step_s, (std::vector<double>{2, 4, 6}));
    EXPECT_EQ(c.measured_rows(), (std::vector<std::size_t>{1, 2, 3}));
    EXPECT_EQ(c.text("seq_len"), "4096");
    EXPECT_DOUBLE_EQ(*c.number("flops_per_iter"), 1e9);
    EXPECT_EQ(c.compute_s.size(), 8u);
    EXPECT_TRUE(c.file->complete);
    EXPECT_EQ(c.file->meta.at("device_name").text, "fixture CPU");
    EXPECT_EQ(cases[1].status, "skipped");
    EXPECT_EQ(cases[1].error, "does not fit");
    EXPECT_TRUE(cases[1].step_s.empty());
    std::filesystem::remove_all(dir);
}

TEST(analysis_reader, incomplete_part_file_is_flagged) {
    const std::string dir = test_fixture::fixture_dir("reader_part");
    fixture_file f;
    f.complete = false;
    f.cases = {explicit_case()};
    write_fixture_file(dir + "/run.h5.part", f);
    const auto cases = read_results_file(dir + "/run.h5.part");
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_FALSE(cases[0].file->complete);
    std::filesystem::remove_all(dir);
}

TEST(analysis_reader, bad_files_give_one_clear_reason) {
    const std::string dir = test_fixture::fixture_dir("reader_bad");
    std::ofstream(dir + "/text.h5") << "not hdf5 at all\n";
    fixture_file future;
    future.schema = "ringscale/3";
    write_fixture_file(dir + "/future.h5", future);
    {
        auto plain = h5::file::create(dir + "/plain.h5");
        plain.root().set_attr("hello", "world");
    }
    fixture_file good;
    good.cases = {explicit_case()};
    write_fixture_file(dir + "/good.h5", good);
    const auto size = std::filesystem::file_size(dir + "/good.h5");
    std::filesystem::copy_file(dir + "/good.h5", dir + "/truncated.h5");
    std::filesystem::resize_file(dir + "/truncated.h5", size / 2);

    EXPECT_NE(message_of(dir + "/text.h5").find("not a readable HDF5 file"), std::string::npos);
    EXPECT_NE(message_of(dir + "/future.h5").find("unknown schema version 'ringscale/3'"),
              std::string::npos);
    EXPECT_NE(message_of(dir + "/plain.h5").find("not a ringscale results file"),
              std::string::npos);
    EXPECT_FALSE(message_of(dir + "/truncated.h5").empty());
    EXPECT_NE(message_of(dir + "/missing.h5").find("no such file"), std::string::npos);

    // The good file is still analysed; every bad one is named once.
    const result_set rs = load_results({dir}, false);
    EXPECT_EQ(rs.files, (std::vector<std::string>{dir + "/good.h5"}));
    EXPECT_EQ(rs.cases.size(), 1u);
    ASSERT_EQ(rs.problems.size(), 4u);
    for (const auto& p : rs.problems)
        EXPECT_EQ(p.rfind("skipping " + dir + "/", 0), 0u) << p;
    EXPECT_THROW(load_results({dir}, true), config_error);
    // With nothing usable the first problem is the one error (exit 2), not a skip line.
    try {
        load_results({dir + "/plain.h5"}, false);
        FAIL() << "a lone unreadable input must be an error";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("plain.h5"), std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

TEST(analysis_reader, expands_directories_and_globs) {
    const std::string dir = test_fixture::fixture_dir("reader_glob");
    std::filesystem::create_directories(dir + "/sub/deeper");
    fixture_file f;
    f.cases = {explicit_case()};
    write_fixture_file(dir + "/a.h5", f);
    write_fixture_file(dir + "/sub/deeper/b.h5", f);
    write_fixture_file(dir + "/sub/c.h5.part", f);
    std::ofstream(dir + "/sub/notes.txt") << "ignored in directories\n";
    std::vector<std::string> problems;
    EXPECT_EQ(expand_inputs({dir}, problems).size(), 3u);
    EXPECT_EQ(expand_inputs({dir + "/*.h5"}, problems), (std::vector<std::string>{dir + "/a.h5"}));
    EXPECT_EQ(expand_inputs({dir + "/sub/*", dir + "/a.h5", dir + "/a.h5"}, problems).size(), 4u);
    EXPECT_TRUE(problems.empty());
    expand_inputs({dir + "/nothing*.h5", dir + "/absent.h5"}, problems);
    EXPECT_EQ(problems.size(), 2u);
    std::filesystem::remove_all(dir);
}
