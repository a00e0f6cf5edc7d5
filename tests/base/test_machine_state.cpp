// The machine's state from /proc and sysfs (src/base/machine_state.hpp): the parsers on known
// text, exact; the core window's arithmetic; the live readers on this machine.
#include "src/base/machine_state.hpp"

#include <chrono>
#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale::machine;

TEST(machine_state, proc_stat_lines_per_core) {
    const proc_stat s = parse_proc_stat("cpu  10 20 30 40 50 60 70 80 0 0\n"
                                        "cpu0 1 2 3 4 5 6 7 8 0 0\n"
                                        "cpu1 100 0 50 900 10 1 2 30\n"
                                        "intr 123\nprocs_running 3\n");
    ASSERT_EQ(s.size(), 2u); // the all-core line is left out
    EXPECT_EQ(s.at(0).busy(), 1u + 2 + 3 + 6 + 7);
    EXPECT_EQ(s.at(0).total(), 36u);
    EXPECT_EQ(s.at(1).steal, 30u);
    EXPECT_EQ(s.at(1).iowait, 10u);
}

TEST(machine_state, proc_stat_old_and_malformed_lines) {
    const proc_stat s = parse_proc_stat("cpu3 5 6 7 8\ncpu4 1 2\ncpuX 1 2 3 4\ncpu-1 1 2 3 4\n");
    ASSERT_EQ(s.size(), 1u); // four fields are enough, two are not
    EXPECT_EQ(s.at(3).busy(), 18u);
    EXPECT_EQ(s.at(3).steal, 0u);
    EXPECT_TRUE(parse_proc_stat("").empty());
}

TEST(machine_state, window_on_sums_the_cores_asked_for) {
    proc_stat a, b;
    a[0] = {100, 0, 0, 100, 0, 0, 0, 0};
    b[0] = {150, 0, 10, 120, 5, 0, 0, 15}; // 60 busy, 20 idle, 5 iowait, 15 steal ticks
    a[1] = {0, 0, 0, 0, 0, 0, 0, 0};
    b[1] = {100, 0, 0, 0, 0, 0, 0, 0}; // not asked for
    a[2] = {500, 0, 0, 0, 0, 0, 0, 0};
    b[2] = {400, 0, 0, 0, 0, 0, 0, 0};                       // went back: counts 0
    const core_window w = window_on(a, b, {0, 2, 7}, 100.0); // core 7 in neither reading
    EXPECT_EQ(w.cores, 2);
    EXPECT_DOUBLE_EQ(w.busy_s, 0.6);
    EXPECT_DOUBLE_EQ(w.steal_s, 0.15);
    EXPECT_DOUBLE_EQ(w.iowait_s, 0.05);
    EXPECT_DOUBLE_EQ(w.total_s, 1.0);
}

TEST(machine_state, schedstat_wait) {
    EXPECT_DOUBLE_EQ(parse_schedstat_wait_s("123456789 2500000000 42\n"), 2.5);
    EXPECT_TRUE(std::isnan(parse_schedstat_wait_s("1 2")));
    EXPECT_TRUE(std::isnan(parse_schedstat_wait_s("1 -5 3")));
    EXPECT_TRUE(std::isnan(parse_schedstat_wait_s("garbage")));
}

TEST(machine_state, live_readers_on_this_machine) {
    EXPECT_FALSE(read_proc_stat().empty()) << "/proc/stat has no per-core lines";
    EXPECT_GT(ticks_per_second(), 0);
    EXPECT_FALSE(allowed_cores().empty());
    EXPECT_FALSE(boot_id().empty());
    EXPECT_TRUE(std::isnan(cpu_mhz({1 << 19}))); // no such core: not known, never 0
    const process_sample a = sample_process();
    volatile double x = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    while (std::chrono::steady_clock::now() < until)
        x = x + 1;
    const process_sample b = sample_process();
    EXPECT_GT(b.wall_s - a.wall_s, 0.049);
    EXPECT_GT(b.cpu_s, a.cpu_s); // the busy loop's CPU time
    EXPECT_GE(b.nivcsw, a.nivcsw);
}
