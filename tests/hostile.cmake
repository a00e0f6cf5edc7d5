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
# Issue 22: one check per finding (gnuplot commands, terminal escapes, JSON, array attributes,
# links and storage outside the file, physics, one launch counted once, export onto results),
# on files crafted by tests/hostile/craft.py.
if(TARGET ringscale-stats)
    add_test(NAME hostile_findings
             COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/hostile/findings_test.py
                     $<TARGET_FILE:ringscale-stats> ${CMAKE_BINARY_DIR}/e2e/small.h5
                     ${CMAKE_BINARY_DIR}/hostile_findings)
    set_tests_properties(hostile_findings PROPERTIES FIXTURES_REQUIRED small_h5 LABELS e2e
                         TIMEOUT 300)
endif()
# The crafted shapes as files (a fixture), the reader's fuzz target replayed over the corpus,
# those shapes and seeded mutations, and --resume agreeing with ringscale-stats on them.
if(TARGET ringscale-stats)
    add_test(NAME hostile_crafted
             COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/hostile/craft.py
                     ${CMAKE_BINARY_DIR}/e2e/small.h5 ${CMAKE_BINARY_DIR}/hostile_crafted)
    set_tests_properties(hostile_crafted PROPERTIES FIXTURES_REQUIRED small_h5
                         FIXTURES_SETUP hostile_crafted LABELS e2e)
    add_library(ringscale_fuzz_reader STATIC ${CMAKE_CURRENT_LIST_DIR}/hostile/fuzz_reader_target.cpp)
    target_link_libraries(ringscale_fuzz_reader PUBLIC ringscale_analysis)
    add_executable(fuzz_replay ${CMAKE_CURRENT_LIST_DIR}/hostile/fuzz_replay.cpp)
    target_link_libraries(fuzz_replay PRIVATE ringscale_fuzz_reader)
    add_test(NAME hostile_fuzz_replay
             COMMAND fuzz_replay 300 ${CMAKE_CURRENT_LIST_DIR}/data/hostile
                     ${CMAKE_BINARY_DIR}/hostile_crafted ${CMAKE_BINARY_DIR}/e2e/small.h5)
    set_tests_properties(hostile_fuzz_replay PROPERTIES FIXTURES_REQUIRED hostile_crafted
                         LABELS e2e TIMEOUT 600)
    # With clang, -DRINGSCALE_LIBFUZZER=ON builds the same target as a libFuzzer binary
    # (tests/hostile/libfuzzer.sh).
    option(RINGSCALE_LIBFUZZER "build the reader's fuzz target with libFuzzer (clang)" OFF)
    if(RINGSCALE_LIBFUZZER AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
        add_executable(fuzz_reader_libfuzzer ${CMAKE_CURRENT_LIST_DIR}/hostile/fuzz_reader_target.cpp)
        target_link_libraries(fuzz_reader_libfuzzer PRIVATE ringscale_analysis)
        target_link_options(fuzz_reader_libfuzzer PRIVATE -fsanitize=fuzzer)
    endif()
endif()
if(TARGET ringscale-stats AND TARGET ringscale_launcher)
    add_executable(resume_agrees ${CMAKE_CURRENT_LIST_DIR}/hostile/resume_agrees.cpp)
    target_link_libraries(resume_agrees PRIVATE ringscale_analysis ringscale_launcher)
    add_test(NAME hostile_resume_agrees
             COMMAND resume_agrees ${CMAKE_BINARY_DIR}/hostile_crafted)
    set_tests_properties(hostile_resume_agrees PROPERTIES FIXTURES_REQUIRED hostile_crafted
                         LABELS e2e)
endif()
