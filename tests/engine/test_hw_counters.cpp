// Hardware counts of the whole process where the kernel allows them, the reason where it does
// not; CPU time per phase beside wall time, every thread's.
#include "src/base/clock.hpp"
#include "src/engine/hw_counters.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

using namespace ringscale;

namespace {

/// Work the compiler cannot drop.
double spin(long n) {
    volatile double x = 1;
    for (long i = 0; i < n; ++i)
        x = x * 1.0000001 + 1e-9;
    return x;
}

} // namespace

TEST(hw_counters, counts_every_thread_or_says_why_not) {
    hw_counters hw;
    const hw_count before = hw.read();
    // Work on a thread started after the counters opened: inherited, so counted.
    std::thread worker([] { spin(2'000'000); });
    worker.join();
    spin(2'000'000);
    const hw_count after = hw.read();
    if (hw.supported()) {
        EXPECT_EQ(hw.status(), "instructions, cycles");
        // Each spin retires at least one instruction per step: both threads' are counted.
        EXPECT_GT(after.instructions - before.instructions, 4'000'000.0);
        EXPECT_GT(after.cycles - before.cycles, 0.0);
    } else {
        EXPECT_EQ(hw.status().rfind("not supported: ", 0), 0u) << hw.status();
        EXPECT_GT(hw.status().size(), std::string("not supported: ").size());
        EXPECT_TRUE(std::isnan(after.instructions));
        EXPECT_TRUE(std::isnan(after.cycles));
        std::cout << "hardware counters here: " << hw.status() << "\n";
    }
}

TEST(hw_counters, threads_of_the_process_are_listed) {
    std::thread worker([] { spin(1'000'000); });
    const std::vector<int> tids = process_threads();
    worker.join();
    EXPECT_GE(tids.size(), 2u); // this one and the worker
}

TEST(phase_timer, cpu_time_beside_wall_time_of_every_thread) {
    phase_timer timer;
    {
        const auto s = timer.time(phase::compute);
        // Two threads busy at once: the process's CPU time counts both.
        std::thread worker([] { spin(20'000'000); });
        spin(20'000'000);
        worker.join();
    }
    EXPECT_GT(timer.compute_cpu_s(), 0.0);
    EXPECT_GT(timer.compute_s(), 0.0);
    EXPECT_EQ(timer.comm_wait_cpu_s(), 0.0);
    timer.add(phase::comm_wait, 1.0); // a device-timed phase: wall time only
    EXPECT_EQ(timer.comm_wait_s(), 1.0);
    EXPECT_EQ(timer.comm_wait_cpu_s(), 0.0);
    timer.reset();
    EXPECT_EQ(timer.compute_cpu_s(), 0.0);
    EXPECT_EQ(timer.compute_s(), 0.0);
}
