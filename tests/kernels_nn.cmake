# Training-step layer kernels (linear, rmsnorm, gelu, cross_entropy, adamw, embedding):
# one unit-test binary per module, plus the dense-layer benchmark (not a test).
foreach(nn_module IN ITEMS linear)
    ringscale_unit_test(test_${nn_module}
                        SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_${nn_module}.cpp
                        LIBS ringscale_kernels)
endforeach()
