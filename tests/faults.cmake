# Faults: a launch stopped by SIGTERM, a rank killed with -9, a rank that hangs (watchdog) and
# a disk that fills; each checks how fast the job ended and that the file which survived is
# read by python3-h5py and by ringscale-stats (hence the target check).
if(TARGET ringscale-stats)
    foreach(fault IN ITEMS sigterm kill9 hang disk_full resume)
        add_test(NAME faults_${fault}
                 COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/faults/${fault}.sh $<TARGET_FILE:ringscale>
                         $<TARGET_FILE:ringscale-stats> ${MPIEXEC_EXECUTABLE}
                         ${CMAKE_BINARY_DIR}/faults/${fault})
        set_tests_properties(faults_${fault} PROPERTIES LABELS "faults;mpi" TIMEOUT 120
                             PROCESSORS 2 ENVIRONMENT "${RINGSCALE_MPI_ENV}")
    endforeach()
else()
    message(STATUS "faults tests: need the ringscale-stats target")
endif()
# Issue 22: SIGTERM before the launch's guard is in place; the command line and config
# counted in the space check, and a disk full while the file is created.
if(TARGET ringscale-stats)
    foreach(fault IN ITEMS sigterm_early disk_full_meta)
        add_test(NAME faults_${fault}
                 COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/faults/${fault}.sh $<TARGET_FILE:ringscale>
                         $<TARGET_FILE:ringscale-stats> ${MPIEXEC_EXECUTABLE}
                         ${CMAKE_BINARY_DIR}/faults/${fault})
        set_tests_properties(faults_${fault} PROPERTIES LABELS "faults;mpi" TIMEOUT 120
                             PROCESSORS 2 ENVIRONMENT "${RINGSCALE_MPI_ENV}"
                             SKIP_RETURN_CODE 77)
    endforeach()
endif()
