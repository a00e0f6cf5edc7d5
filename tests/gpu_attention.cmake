# GPU attention tests: the CUDA flash-attention forward/backward against the double reference
# on bf16/fp16-rounded inputs, label `gpu`. Each test skips with a reason where no device is
# visible, so they pass (skipped) on CPU-only CI.
if(RINGSCALE_HAVE_CUDA)
    ringscale_gpu_test(test_gpu_attention SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_attention.cpp
                       LIBS ringscale_kernels ringscale_kernels_cuda)
    # The sm_90a building blocks one at a time (skips unless sm90 can run).
    ringscale_gpu_test(test_gpu_sm90_primitives
                       SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_sm90_primitives.cu
                       LIBS ringscale_kernels ringscale_kernels_cuda)
else()
    message(STATUS "GPU tests: CUDA is not built, so test_gpu_attention is not registered")
endif()
# The attention jobs on CUDA through the run loop, NCCL and staged MPI (labels mpi;npN;gpu).
if(RINGSCALE_HAVE_CUDA)
    ringscale_mpi_test(test_attention_gpu_mpi
                       SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_attention_gpu_mpi.cpp
                       LIBS ringscale_launcher NP 1 2)
    foreach(np IN ITEMS 1 2)
        set_property(TEST test_attention_gpu_mpi_np${np} APPEND PROPERTY LABELS gpu)
        set_property(TEST test_attention_gpu_mpi_np${np} PROPERTY
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
    endforeach()
endif()
