// How a GPU test binary ends. ctest runs each GPU binary as one test (tests/CMakeLists.txt):
// on a host without a CUDA device it counts the binary as skipped, once, with the reason
// printed here, instead of starting one process per skipped case; on a GPU host every case
// runs and gtest reports each.
#pragma once

#include "kernels/gpu.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace ringscale::testing_support {

/// ctest's SKIP_RETURN_CODE for GPU test binaries (tests/CMakeLists.txt).
inline constexpr int gpu_skip_exit_code = 77;

/// Whether this process's tests skipped for want of a device: none failed, some skipped, and
/// no CUDA device is visible.
inline bool gpu_tests_skipped_without_device(int gtest_status) {
    const auto& unit = *::testing::UnitTest::GetInstance();
    return gtest_status == 0 && unit.skipped_test_count() > 0 && kernels::gpu_count() == 0;
}

/// Print the one line that says why the binary counts as skipped, with gtest's counts.
inline void print_gpu_skip_reason() {
    const auto& unit = *::testing::UnitTest::GetInstance();
    std::printf("SKIPPED: no CUDA device visible, GPU tests need a GPU (%d of %d tests skipped, "
                "%d passed without one; ctest counts the binary as skipped)\n",
                unit.skipped_test_count(), unit.test_to_run_count(), unit.successful_test_count());
    std::fflush(stdout);
}

} // namespace ringscale::testing_support
