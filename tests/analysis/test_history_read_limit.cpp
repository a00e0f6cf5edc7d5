// The history reader's limit (analysis/history/read_limit): it grows with the file's size and
// its base, and RINGSCALE_READ_LIMIT_S is read as a plain number of seconds or refused in one
// line.
#include "analysis/history/read_limit.hpp"

#include "src/base/error.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::analysis::history;

TEST(history_read_limit, the_read_limit_scales_with_the_file_and_its_base) {
    const std::string dir = test_fixture::fixture_dir("history_read_limit");
    const std::string path = dir + "/five_mib.bin";
    std::ofstream(path, std::ios::binary) << std::string(5 << 20, 'x');
    // The default: 10 s plus 2 s a MiB; a base scales both parts.
    EXPECT_DOUBLE_EQ(read_cpu_limit_s(path), 20.0);
    EXPECT_DOUBLE_EQ(read_cpu_limit_s(path, 0.001), 0.002);
    EXPECT_DOUBLE_EQ(read_cpu_limit_s(dir + "/missing.h5"), 10.0);
    std::filesystem::remove_all(dir);
}

TEST(history_read_limit, the_read_limit_from_the_environment_is_checked) {
    unsetenv("RINGSCALE_READ_LIMIT_S");
    EXPECT_DOUBLE_EQ(read_limit_from_env(), default_read_limit_s);
    for (const char* good : {"", "0.001", "2.5", "86400"}) {
        setenv("RINGSCALE_READ_LIMIT_S", good, 1);
        EXPECT_NO_THROW(read_limit_from_env()) << good;
    }
    setenv("RINGSCALE_READ_LIMIT_S", "2.5", 1);
    EXPECT_DOUBLE_EQ(read_limit_from_env(), 2.5);
    for (const char* bad : {"0", "0.0009", "-1", "86401", "1e3", "0x10", " 5", "5 ", "nan", "inf",
                            "10s", "1..2", "\x1b[2J"}) {
        setenv("RINGSCALE_READ_LIMIT_S", bad, 1);
        try {
            read_limit_from_env();
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const config_error& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("RINGSCALE_READ_LIMIT_S='", 0), 0u) << what;
            EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
    unsetenv("RINGSCALE_READ_LIMIT_S");
}

TEST(history_read_limit, a_limit_reads_in_whole_seconds_from_ten_up) {
    EXPECT_EQ(limit_seconds_text(34.2), "35");
    EXPECT_EQ(limit_seconds_text(0.00196), "0.00196");
    EXPECT_EQ(limit_seconds_text(2.5), "2.5");
    EXPECT_DOUBLE_EQ(read_wall_limit_s(20), 90);
}
