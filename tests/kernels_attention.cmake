# Attention kernels: layout/sharding, softmax merge, reference and fast CPU attention.
ringscale_unit_test(test_layout SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_layout.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_softmax_merge SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_softmax_merge.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_attention_ref SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_attention_ref.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_attention_cpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_attention_cpu.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_attention_cpu_bwd
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_attention_cpu_bwd.cpp
                    LIBS ringscale_kernels)
# The Hopper attention backward's tile, pipeline and offset arithmetic (no GPU, no CUDA).
ringscale_unit_test(test_attention_bwd_sm90_plan
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_attention_bwd_sm90_plan.cpp
                    LIBS ringscale_kernels)
# The Hopper attention forward's shapes, shared-memory map and operand offsets (no GPU).
ringscale_unit_test(test_attention_fwd_sm90_plan
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_attention_fwd_sm90_plan.cpp
                    LIBS ringscale_kernels)
# TMA tensor-map checks (CUDA builds; no GPU: they refuse before the driver is asked).
if(RINGSCALE_HAVE_CUDA)
    ringscale_unit_test(test_tma_desc SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tma_desc.cpp
                        LIBS ringscale_kernels_cuda)
endif()
# Its GEMMs one step at a time on the GPU against exact CPU products (label gpu; skips without
# an sm90-capable device).
if(RINGSCALE_HAVE_CUDA)
    ringscale_gpu_test(test_gpu_attention_bwd_sm90_pieces
                       SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_attention_bwd_sm90_pieces.cu
                       LIBS ringscale_kernels ringscale_kernels_cuda)
endif()

# Kernel benchmark (not a test): run tests/bench/attention_kernel.sh.
add_executable(bench_attention_kernel ${CMAKE_CURRENT_LIST_DIR}/bench/bench_attention_kernel.cpp)
target_link_libraries(bench_attention_kernel PRIVATE ringscale_kernels)
# The CUDA attention path's parse/resolve logic (built with or without CUDA).
ringscale_unit_test(test_attention_path SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_attention_path.cpp
                    LIBS ringscale_kernels_cuda)
