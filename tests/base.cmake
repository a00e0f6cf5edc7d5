ringscale_unit_test(test_parse SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_parse.cpp LIBS ringscale_base)
ringscale_unit_test(test_h5 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_h5.cpp LIBS ringscale_base)
ringscale_mpi_test(test_comm_mpi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_mpi.cpp LIBS ringscale_comm)
