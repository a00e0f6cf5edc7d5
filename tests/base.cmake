ringscale_unit_test(test_parse SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_parse.cpp LIBS ringscale_base)
ringscale_unit_test(test_h5 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_h5.cpp LIBS ringscale_base)
ringscale_mpi_test(test_comm_mpi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_comm_mpi.cpp LIBS ringscale_comm)
ringscale_unit_test(test_cli SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli.cpp LIBS ringscale_launcher)
ringscale_unit_test(test_output_name SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_output_name.cpp
                    LIBS ringscale_launcher)
ringscale_unit_test(test_results_probe SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_results_probe.cpp
                    LIBS ringscale_launcher)
ringscale_unit_test(test_collectives SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_collectives.cpp LIBS ringscale_jobs)
ringscale_mpi_test(test_run_loop_mpi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_run_loop_mpi.cpp LIBS ringscale_launcher ringscale_analysis)
ringscale_unit_test(test_results_schema SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_results_schema.cpp LIBS ringscale_launcher)
ringscale_unit_test(test_device_dispatch SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_device_dispatch.cpp LIBS ringscale_launcher)
