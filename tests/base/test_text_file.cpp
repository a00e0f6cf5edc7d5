// read_text_file (src/base/text_file.hpp): a job file is a regular file of bounded size; a FIFO,
// a device, /proc/self/mem or a huge sparse file is one clear error, at once.
#include "src/base/error.hpp"
#include "src/base/text_file.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ringscale;

namespace {

std::string temp_path(const char* tag) {
    return std::string("/tmp/ringscale_test_text_file_") + tag + "_" + std::to_string(getpid());
}

/// The message read_text_file throws for `path`, or "" when it reads it.
std::string refusal(const std::string& path, std::uint64_t max_bytes = max_job_file_bytes) {
    try {
        read_text_file(path, max_bytes, "job file");
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(text_file, reads_a_regular_file) {
    const std::string path = temp_path("ini");
    std::ofstream(path) << "job = collectives\nop = allreduce\n";
    EXPECT_EQ(read_text_file(path, 1024, "job file"), "job = collectives\nop = allreduce\n");
    std::remove(path.c_str());
}

TEST(text_file, refuses_what_is_not_a_regular_file) {
    EXPECT_NE(refusal("/dev/zero").find("job file '/dev/zero' is a device"), std::string::npos);
    EXPECT_NE(refusal("/tmp").find("is a directory"), std::string::npos);
    EXPECT_NE(refusal("/no/such/file").find("cannot open it"), std::string::npos);
    const std::string fifo = temp_path("fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_NE(refusal(fifo).find("is a FIFO"), std::string::npos); // and does not block
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    std::remove(fifo.c_str());
}

TEST(text_file, refuses_a_file_that_cannot_be_read) {
    // A regular file to stat, whose read at offset 0 fails (EIO): was the default sweep.
    EXPECT_NE(refusal("/proc/self/mem").find("cannot read it"), std::string::npos);
}

TEST(text_file, refuses_a_file_above_the_cap_before_reading_it) {
    const std::string path = temp_path("sparse");
    { std::ofstream f(path); }
    ASSERT_EQ(truncate(path.c_str(), std::int64_t{1} << 30), 0); // 1 GiB, sparse
    EXPECT_NE(refusal(path).find("is 1.00 GiB, more than the 1.00 MiB allowed"), std::string::npos)
        << refusal(path);
    std::remove(path.c_str());
    // /proc files say size 0: the cap holds while reading.
    EXPECT_NE(refusal("/proc/self/maps", 16).find("larger than the 16 B allowed"),
              std::string::npos)
        << refusal("/proc/self/maps", 16);
}
