# GPU tests: every CUDA kernel against its CPU reference on seeded inputs, label `gpu`. Each
# test skips with a reason where no device is visible, so they pass (skipped) on CPU-only CI.
if(RINGSCALE_HAVE_CUDA)
    ringscale_gpu_test(test_gpu_kernels SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_kernels.cpp
                       LIBS ringscale_kernels ringscale_kernels_cuda)
else()
    message(STATUS "GPU tests: CUDA is not built, so test_gpu_kernels is not registered")
endif()
