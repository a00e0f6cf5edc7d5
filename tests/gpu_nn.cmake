# GPU tests of the NN path: CUDA cross-entropy and the cuBLAS dense layer against the CPU
# kernels (label `gpu`), and the device-staged MPI communicator under mpiexec (labels
# `mpi;npN;gpu`). Each test skips with a reason where no device is visible, so they pass
# (skipped) on CPU-only CI.
if(RINGSCALE_HAVE_CUDA)
    ringscale_gpu_test(test_gpu_nn SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_nn.cpp
                       LIBS ringscale_kernels ringscale_kernels_cuda)
    ringscale_mpi_test(test_comm_mpi_staged
                       SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_mpi_staged.cpp
                       LIBS ringscale_comm ringscale_kernels_cuda)
    foreach(np IN ITEMS 1 2 4)
        # ctest reports a run whose tests all skipped as skipped, not passed.
        set_property(TEST test_comm_mpi_staged_np${np} APPEND PROPERTY LABELS gpu)
        set_property(TEST test_comm_mpi_staged_np${np} PROPERTY
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
    endforeach()
else()
    message(STATUS "GPU tests: CUDA is not built, so test_gpu_nn and test_comm_mpi_staged are "
                   "not registered")
endif()
