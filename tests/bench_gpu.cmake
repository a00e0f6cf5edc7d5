# GPU benchmark programs, run by hand through tests/bench/attention_gpu.sh; never registered as
# tests, and built only where CUDA is.
if(RINGSCALE_HAVE_CUDA)
    add_executable(bench_attention_gpu ${CMAKE_CURRENT_LIST_DIR}/bench/bench_attention_gpu.cpp)
    target_link_libraries(bench_attention_gpu PRIVATE ringscale_kernels ringscale_kernels_cuda)
endif()
