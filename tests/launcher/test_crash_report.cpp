// The crash report (src/launcher/crash_report.hpp): a fault signal prints the task, the signal,
// the stage and the stack on stderr, and the process still dies of that signal.
#include "src/launcher/crash_report.hpp"

#include <csignal>
#include <cstdlib>
#include <gtest/gtest.h>
#include <sys/resource.h>

namespace {

using ringscale::install_crash_report;
using ringscale::launch_stage;
using ringscale::set_crash_stage;

int* volatile g_null = nullptr;

/// In the death test's child: no core file for the signal it dies of.
void no_core_file() {
    const rlimit none{0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
}

constexpr const char* k_sanitizer_skip =
    "a sanitizer build: the sanitizer's own handler reports faults";

TEST(CrashReportDeathTest,
     a_null_dereference_names_the_task_signal_and_stage_and_still_dies_of_it) {
    if (!ringscale::crash_report_installs())
        GTEST_SKIP() << k_sanitizer_skip;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            no_core_file();
            ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
            install_crash_report();
            set_crash_stage(launch_stage::mpi_init);
            *g_null = 1;
        },
        testing::KilledBySignal(SIGSEGV),
        "ringscale: task 3 \\(pid [0-9]+\\) died of SIGSEGV at address 0x0 inside MPI_Init; "
        "its stack:\n.*test_launcher_crash_report");
}

TEST(CrashReportDeathTest, a_sent_signal_without_a_numeric_rank_is_reported_and_sent_again) {
    if (!ringscale::crash_report_installs())
        GTEST_SKIP() << k_sanitizer_skip;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            no_core_file();
            ::setenv("OMPI_COMM_WORLD_RANK", "\x1b]0;title\x07", 1); // not a number: not shown
            ::unsetenv("PMIX_RANK");
            ::unsetenv("SLURM_PROCID");
            install_crash_report();
            set_crash_stage(launch_stage::start_up);
            std::raise(SIGBUS);
            std::_Exit(0); // not reached: the report sends the signal again
        },
        testing::KilledBySignal(SIGBUS),
        "ringscale: task \\? \\(pid [0-9]+\\) died of SIGBUS at start-up, before MPI_Init; "
        "its stack:\n");
}

TEST(CrashReportDeathTest, abort_while_running_is_reported_once_and_ends_by_sigabrt) {
    if (!ringscale::crash_report_installs())
        GTEST_SKIP() << k_sanitizer_skip;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            no_core_file();
            ::setenv("SLURM_PROCID", "12", 1);
            ::unsetenv("OMPI_COMM_WORLD_RANK");
            ::unsetenv("PMIX_RANK");
            install_crash_report();
            set_crash_stage(launch_stage::running);
            std::abort();
        },
        testing::KilledBySignal(SIGABRT),
        "ringscale: task 12 \\(pid [0-9]+\\) died of SIGABRT while running; its stack:\n");
}

} // namespace
