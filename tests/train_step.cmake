# The training step: model unit tests (layout, whole-model backward vs finite differences,
# reference trainer), job planning, and the distributed step against the single-rank run.
ringscale_unit_test(test_transformer SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_transformer.cpp
                    LIBS ringscale_kernels)
