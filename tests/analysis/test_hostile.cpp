// The reader's defences against damaged files: the disposable child that reads a file first,
// and the checks a case's timings must pass before they become a figure.
#include "analysis/presentation/plots.hpp"
#include "analysis/reading/case_checks.hpp"
#include "analysis/reading/file_probe.hpp"

#include <csignal>
#include <filesystem>
#include <gtest/gtest.h>
#include <limits>
#include <stdexcept>
#include <unistd.h>
#include <vector>

using namespace ringscale::analysis;

TEST(file_probe, a_normal_read_or_an_ordinary_error_is_safe_in_process) {
    EXPECT_EQ(probe_in_child([] {}), "");
    EXPECT_EQ(probe_in_child([] { throw std::runtime_error("bad attribute"); }), "");
}

TEST(file_probe, a_memory_blowup_is_named) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "under AddressSanitizer its allocator aborts instead of throwing bad_alloc "
                    "at the memory cap (the probe then reports SIGABRT)";
#endif
    const std::string mem = probe_in_child([] { std::vector<char> v(std::size_t{8} << 30, 1); });
    EXPECT_NE(mem.find("memory"), std::string::npos) << mem;
}

TEST(file_probe, a_crash_and_a_hang_are_named) {
    EXPECT_NE(probe_in_child([] { std::raise(SIGSEGV); }).find("SIGSEGV"), std::string::npos);
    probe_limits quick;
    quick.seconds = 1;
    const std::string slow = probe_in_child(
        [] {
            for (;;)
                pause();
        },
        quick);
    EXPECT_NE(slow.find("longer than 1 s"), std::string::npos) << slow;
}

namespace {

case_data two_rank_case() {
    case_data c;
    c.world_size = 2;
    c.world = 2;
    c.rows = 3;
    c.is_warmup = {1, 0, 0};
    c.time_s = {1, 2, 3, 4, 5, 6};
    return c;
}

} // namespace

TEST(case_checks, a_sound_case_passes) {
    EXPECT_EQ(timing_problem(two_rank_case()), "");
}

TEST(case_checks, each_damage_is_named) {
    auto c = two_rank_case();
    c.time_s[5] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_NE(timing_problem(c).find("time_s [iteration 2, rank 1] is nan"), std::string::npos);
    c = two_rank_case();
    c.compute_s = {0, 0, 0, -1, 0, 0};
    EXPECT_NE(timing_problem(c).find("compute_s [iteration 1, rank 1] is -1"), std::string::npos);
    c = two_rank_case();
    c.is_warmup[1] = 7;
    EXPECT_NE(timing_problem(c).find("is_warmup[1] is 7"), std::string::npos);
    c = two_rank_case();
    c.is_warmup = {1, 1, 1};
    EXPECT_NE(timing_problem(c).find("no timed iteration"), std::string::npos);
    c = two_rank_case();
    c.world_size = 1000000000;
    EXPECT_NE(timing_problem(c).find("world_size is 1000000000 but the timings have 2"),
              std::string::npos);
}

TEST(case_checks, warmup_rows_come_from_the_attribute_or_not_at_all) {
    auto c = two_rank_case();
    c.attrs["warmup"] = attr_value{"2", 2.0, true};
    EXPECT_EQ(warmup_from_attribute(c), (std::vector<std::uint8_t>{1, 1, 0}));
    c.attrs["warmup"] = attr_value{"4", 4.0, true}; // more than the rows: refuse to guess
    EXPECT_TRUE(warmup_from_attribute(c).empty());
    c.attrs.erase("warmup");
    EXPECT_TRUE(warmup_from_attribute(c).empty());
}

TEST(plots, no_text_becomes_a_gnuplot_command) {
    if (!have_gnuplot())
        GTEST_SKIP() << "gnuplot is not installed here: no plot script is run";
    const std::string dir = "/tmp/ringscale_test_plots_" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    // A title straight from a file: a newline would end the gnuplot string and the next line
    // would run as a command (system() runs a shell).
    plot_heatmap(two_rank_case(), "P=2 mpi\nsystem(\"touch PWNED\")\n#", dir, "heat");
    EXPECT_TRUE(std::filesystem::exists(dir + "/heat.png"));
    EXPECT_FALSE(std::filesystem::exists(dir + "/PWNED"));
    std::filesystem::remove_all(dir);
}
