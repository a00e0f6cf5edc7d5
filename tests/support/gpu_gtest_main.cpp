// Shared main for the GPU unit tests: gtest's, except that a binary whose tests skipped for
// want of a CUDA device exits gpu_skip_exit_code with the reason (ctest: skipped, once).
#include "tests/support/gpu_test_exit.hpp"

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    const int status = RUN_ALL_TESTS();
    if (!ringscale::testing_support::gpu_tests_skipped_without_device(status))
        return status;
    ringscale::testing_support::print_gpu_skip_reason();
    return ringscale::testing_support::gpu_skip_exit_code;
}
