# train_step on a compute device: the training backend's dispatch and refusals and the device
# plan (unit, no GPU needed); the CUDA backend against the CPU backend (label gpu); the job on
# CUDA through the run loop at np=1 and 2 over NCCL and staged MPI (labels mpi;npN;gpu). The
# GPU tests skip with the reason where no GPU is visible.
ringscale_unit_test(test_train_ops SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_train_ops.cpp
                    LIBS ringscale_launcher)
if(RINGSCALE_HAVE_CUDA)
    ringscale_gpu_test(test_gpu_train_ops SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_train_ops.cpp
                       LIBS ringscale_kernels ringscale_kernels_cuda)
    ringscale_mpi_test(test_train_step_gpu_mpi
                       SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_train_step_gpu_mpi.cpp
                       LIBS ringscale_launcher NP 1 2 TIMEOUT 600)
    foreach(np IN ITEMS 1 2)
        set_property(TEST test_train_step_gpu_mpi_np${np} APPEND PROPERTY LABELS gpu)
        set_property(TEST test_train_step_gpu_mpi_np${np} PROPERTY
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
    endforeach()
else()
    message(STATUS "GPU tests: CUDA is not built, so test_gpu_train_ops and "
                   "test_train_step_gpu_mpi are not registered")
endif()
