// The parent's side of --resume's probe of a prior results file (src/engine/results_probe.hpp):
// how a child's ending becomes a reason. The child's side (the launcher's hidden mode on a file
// that hangs HDF5) runs in tests/e2e/hostile_launch.sh.
#include "src/engine/results_probe.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace ringscale;

namespace {

fs::path scratch_dir() {
    return fs::temp_directory_path() / ("ringscale_results_probe_" + std::to_string(getpid()));
}

// A stand-in for the launcher: a shell script that ends the way `body` says.
std::string fake_launcher(const std::string& name, const std::string& body) {
    const fs::path dir = scratch_dir();
    fs::create_directories(dir);
    const fs::path path = dir / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
    return path.string();
}

// Removes the scripts when the test binary ends (ctest runs each test in its own process).
struct scratch_cleanup {
    ~scratch_cleanup() {
        std::error_code ec;
        fs::remove_all(scratch_dir(), ec);
    }
} const cleanup;

} // namespace

TEST(results_probe, a_normal_ending_means_safe_to_read) {
    EXPECT_EQ(probe_results_file("x.h5", fake_launcher("ok", "exit 0")), "");
}

TEST(results_probe, the_file_is_passed_after_the_hidden_flag) {
    const std::string exe =
        fake_launcher("args", "[ \"$1\" = --probe-results ] && [ \"$2\" = 'dir/x.h5' ] || exit 9");
    EXPECT_EQ(probe_results_file("dir/x.h5", exe), "");
}

TEST(results_probe, a_signal_names_it) {
    const std::string why = probe_results_file("x.h5", fake_launcher("segv", "kill -SEGV $$"));
    EXPECT_NE(why.find("crashed the HDF5 library (SIGSEGV)"), std::string::npos) << why;
}

TEST(results_probe, the_alarm_is_a_time_out) {
    child_limits limits;
    limits.seconds = 3;
    const std::string why =
        probe_results_file("x.h5", fake_launcher("alrm", "kill -ALRM $$"), limits);
    EXPECT_EQ(why, "reading it took longer than 3 s");
}

TEST(results_probe, running_out_of_memory_and_other_exits) {
    EXPECT_NE(probe_results_file("x.h5", fake_launcher("mem", "exit 3")).find("memory"),
              std::string::npos);
    EXPECT_EQ(probe_results_file("x.h5", fake_launcher("other", "exit 1")),
              "reading it failed (exit 1)");
}

TEST(results_probe, no_such_executable_reads_in_process) {
    EXPECT_EQ(probe_results_file("x.h5", "/nonexistent/ringscale"), "");
}
