# The collectives job through the run loop on the CPU: every operation out of place and in
# place, validated exactly, at np=1, 2, 4 (labels mpi;npN).
ringscale_mpi_test(test_collectives_mpi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_collectives_mpi.cpp
                   LIBS ringscale_launcher)
# The collectives job on CUDA through the run loop, NCCL and staged MPI (labels mpi;npN;gpu).
if(RINGSCALE_HAVE_CUDA)
    ringscale_mpi_test(test_collectives_gpu_mpi
                       SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_collectives_gpu_mpi.cpp
                       LIBS ringscale_launcher NP 1 2)
    foreach(np IN ITEMS 1 2)
        set_property(TEST test_collectives_gpu_mpi_np${np} APPEND PROPERTY LABELS gpu)
        set_property(TEST test_collectives_gpu_mpi_np${np} PROPERTY
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
    endforeach()
endif()
