// Shared main for MPI tests: every rank runs every test; only rank 0 prints, and all
// ranks exit with the same status (failure on any rank fails the run everywhere).
// Compiled with RINGSCALE_GPU_TEST for the MPI GPU tests: a run whose tests skipped for want
// of a CUDA device on some rank (and failed nowhere) exits gpu_skip_exit_code with the reason.
#include <gtest/gtest.h>
#include <mpi.h>

#ifdef RINGSCALE_GPU_TEST
#include "tests/support/gpu_test_exit.hpp"
#endif

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    ::testing::InitGoogleTest(&argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
    }
    const int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    int any_failed = 0;
    MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && any_failed && !local_failed)
        std::fprintf(stderr, "a test failed on another rank\n");
    int status = any_failed;
#ifdef RINGSCALE_GPU_TEST
    namespace ts = ringscale::testing_support;
    const int local_skipped = ts::gpu_tests_skipped_without_device(any_failed) ? 1 : 0;
    int skipped = 0;
    MPI_Allreduce(&local_skipped, &skipped, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (skipped) {
        if (rank == 0)
            ts::print_gpu_skip_reason();
        status = ts::gpu_skip_exit_code;
    }
#endif
    MPI_Finalize();
    return status;
}
