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
# Escaping of untrusted text for each sink, bounded job-file reading (issue 22).
ringscale_unit_test(test_text_escape SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_text_escape.cpp
                    LIBS ringscale_base)
ringscale_unit_test(test_text_file SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_text_file.cpp
                    LIBS ringscale_base)
# Issue 22: the results writer on a disk that fills while the file is created.
ringscale_unit_test(test_results_writer_full
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_results_writer_full.cpp
                    LIBS ringscale_launcher)
ringscale_unit_test(test_h5_hostile SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_h5_hostile.cpp
                    LIBS ringscale_base)
ringscale_unit_test(test_stored_case SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_stored_case.cpp
                    LIBS ringscale_base)
