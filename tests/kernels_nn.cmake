# Training-step layer kernels: one unit-test binary per module, plus the dense-layer benchmark
# (a plain executable, deliberately not a test: timings do not belong in ctest).
ringscale_unit_test(test_linear SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_linear.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_rmsnorm SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rmsnorm.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_gelu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gelu.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_cross_entropy SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cross_entropy.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_adamw SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_adamw.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_embedding SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_embedding.cpp
                    LIBS ringscale_kernels)
add_executable(bench_dense ${CMAKE_CURRENT_LIST_DIR}/bench/bench_dense.cpp)
target_link_libraries(bench_dense PRIVATE ringscale_kernels)
ringscale_unit_test(test_parallel SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_parallel.cpp
                    LIBS ringscale_kernels)
