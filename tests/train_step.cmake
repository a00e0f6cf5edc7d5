# The training step: model unit tests (layout, whole-model backward vs finite differences,
# reference trainer), job planning, and the distributed step against the single-rank run.
ringscale_unit_test(test_transformer SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_transformer.cpp
                    LIBS ringscale_kernels)
ringscale_unit_test(test_train_step SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_train_step.cpp
                    LIBS ringscale_jobs)
ringscale_mpi_test(test_train_step_mpi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_train_step_mpi.cpp
                   LIBS ringscale_launcher TIMEOUT 600)
