# Hostile results files (tests/hostile/): a checked-in corpus of byte-flipped files that once
# crashed HDF5, files crafted from a real launch's (the e2e fixture small.h5) to carry each
# damage the reader must catch, and a short seeded mutation-fuzzer run. Debian's python3-h5py.
if(TARGET ringscale-stats)
    set(hostile_dir ${CMAKE_CURRENT_LIST_DIR}/hostile)
    add_test(NAME hostile_files
             COMMAND /usr/bin/python3 ${hostile_dir}/hostile_test.py $<TARGET_FILE:ringscale-stats>
                     ${CMAKE_BINARY_DIR}/e2e/small.h5 ${CMAKE_CURRENT_LIST_DIR}/data/hostile
                     ${CMAKE_BINARY_DIR}/hostile)
    set_tests_properties(hostile_files PROPERTIES FIXTURES_REQUIRED small_h5 LABELS e2e TIMEOUT 600)
    add_test(NAME hostile_fuzz_short
             COMMAND /usr/bin/python3 ${hostile_dir}/fuzz_reader.py $<TARGET_FILE:ringscale-stats>
                     ${CMAKE_BINARY_DIR}/e2e/small.h5 ${CMAKE_BINARY_DIR}/fuzz 40 0)
    set_tests_properties(hostile_fuzz_short PROPERTIES FIXTURES_REQUIRED small_h5 LABELS e2e
                         TIMEOUT 600)
endif()
# A full disk is an error, not a finished analysis: exit 2 and one line.
if(TARGET ringscale-stats)
    add_test(NAME hostile_stdout_full
             COMMAND bash -c "$<TARGET_FILE:ringscale-stats> summary ${CMAKE_BINARY_DIR}/e2e/small.h5 >/dev/full 2>${CMAKE_BINARY_DIR}/full.err; rc=$?; cat ${CMAKE_BINARY_DIR}/full.err; [ $rc = 2 ] && [ $(wc -l <${CMAKE_BINARY_DIR}/full.err) = 1 ]")
    set_tests_properties(hostile_stdout_full PROPERTIES FIXTURES_REQUIRED small_h5 LABELS e2e)
endif()
