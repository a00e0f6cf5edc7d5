# The collectives job through the run loop on the CPU: every operation out of place and in
# place, validated exactly, at np=1, 2, 4 (labels mpi;npN).
ringscale_mpi_test(test_collectives_mpi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_collectives_mpi.cpp
                   LIBS ringscale_launcher)
