# End-to-end: the launcher under mpiexec, its bad-input behaviour, and the schema as read by
# Debian's python3-h5py (a contract with users' notebooks).
set(e2e_dir ${CMAKE_CURRENT_LIST_DIR}/e2e)
set(e2e_out ${CMAKE_BINARY_DIR}/e2e)
add_test(NAME e2e_launch_small
         COMMAND bash ${e2e_dir}/launch_small.sh $<TARGET_FILE:ringscale> ${MPIEXEC_EXECUTABLE}
                 ${e2e_out}/small.h5)
set_tests_properties(e2e_launch_small PROPERTIES FIXTURES_SETUP small_h5 LABELS "e2e;mpi"
                     ENVIRONMENT "${RINGSCALE_MPI_ENV}" TIMEOUT 120 PROCESSORS 2)
add_test(NAME e2e_schema_h5py COMMAND /usr/bin/python3 ${e2e_dir}/check_schema.py ${e2e_out}/small.h5 2)
set_tests_properties(e2e_schema_h5py PROPERTIES FIXTURES_REQUIRED small_h5 LABELS e2e)
# --repeat: interleaved repetitions recorded as replicates, pooled by ringscale-stats.
add_test(NAME e2e_repeat
         COMMAND bash ${e2e_dir}/repeat.sh $<TARGET_FILE:ringscale> $<TARGET_FILE:ringscale-stats>
                 ${MPIEXEC_EXECUTABLE} ${e2e_out}/repeat)
set_tests_properties(e2e_repeat PROPERTIES LABELS "e2e;mpi" ENVIRONMENT "${RINGSCALE_MPI_ENV}"
                     TIMEOUT 120 PROCESSORS 2)
# The bad-input matrix covers both tools (tests/e2e/bad_input.cases, one line per case).
if(TARGET ringscale-stats)
    add_test(NAME e2e_bad_input
             COMMAND bash ${e2e_dir}/bad_input.sh $<TARGET_FILE:ringscale>
                     $<TARGET_FILE:ringscale-stats> ${MPIEXEC_EXECUTABLE} ${e2e_out}/bad_input)
    set_tests_properties(e2e_bad_input PROPERTIES LABELS "e2e;mpi"
                         ENVIRONMENT "${RINGSCALE_MPI_ENV}" TIMEOUT 400 PROCESSORS 2)
else()
    message(STATUS "e2e_bad_input test: needs the ringscale-stats target")
endif()
# ringscale-stats on the launcher's own file: summary reads it, an A/A compare is no regression.
add_test(NAME e2e_stats_on_launcher_file
         COMMAND bash -c "set -e; $<TARGET_FILE:ringscale-stats> summary ${e2e_out}/small.h5 --format csv > ${e2e_out}/summary.csv; grep -q allreduce ${e2e_out}/summary.csv; grep -q alltoall ${e2e_out}/summary.csv; $<TARGET_FILE:ringscale-stats> compare ${e2e_out}/small.h5 ${e2e_out}/small.h5")
set_tests_properties(e2e_stats_on_launcher_file PROPERTIES FIXTURES_REQUIRED small_h5 LABELS e2e)
add_test(NAME e2e_config_consensus
         COMMAND bash ${e2e_dir}/consensus.sh $<TARGET_FILE:ringscale> ${MPIEXEC_EXECUTABLE}
                 ${e2e_out}/consensus)
set_tests_properties(e2e_config_consensus PROPERTIES LABELS "e2e;mpi" ENVIRONMENT "${RINGSCALE_MPI_ENV}"
                     TIMEOUT 60 PROCESSORS 2)
# Every job pooled over two launches at np = 1, 2, 4: families, models, report sections and
# compare matches (identity-keyed cases). Extend here with launch-level resampling checks.
add_test(NAME e2e_pooled_study
         COMMAND bash ${e2e_dir}/pooled_study.sh $<TARGET_FILE:ringscale>
                 $<TARGET_FILE:ringscale-stats> ${MPIEXEC_EXECUTABLE} ${e2e_out}/pooled_study
                 ${CMAKE_CURRENT_LIST_DIR}/data)
set_tests_properties(e2e_pooled_study PROPERTIES LABELS "e2e;mpi" ENVIRONMENT "${RINGSCALE_MPI_ENV}"
                     TIMEOUT 600 PROCESSORS 2)
add_test(NAME e2e_binding_warning
         COMMAND bash ${e2e_dir}/binding_warning.sh $<TARGET_FILE:ringscale> ${MPIEXEC_EXECUTABLE}
                 ${e2e_out}/binding_warning)
set_tests_properties(e2e_binding_warning PROPERTIES LABELS "e2e;mpi" ENVIRONMENT "${RINGSCALE_MPI_ENV}"
                     TIMEOUT 60 SKIP_RETURN_CODE 77)
# Results that must not be lost: colliding names, unsafe SLURM_JOB_ID, --resume re-checking a
# prior case's data, a deleted output directory, a prior file that hangs HDF5
# (tests/e2e/hostile_launch.sh).
add_test(NAME e2e_hostile_launch
         COMMAND bash ${e2e_dir}/hostile_launch.sh $<TARGET_FILE:ringscale> ${MPIEXEC_EXECUTABLE}
                 ${e2e_out}/hostile_launch ${CMAKE_CURRENT_LIST_DIR}/data)
set_tests_properties(e2e_hostile_launch PROPERTIES LABELS "e2e;mpi" ENVIRONMENT "${RINGSCALE_MPI_ENV}"
                     TIMEOUT 300 PROCESSORS 2)
# Weak scaling of the attention jobs (--seq-len-per-rank, both --seq-rule) forms families.
add_test(NAME e2e_weak_attention
         COMMAND bash ${e2e_dir}/weak_study.sh $<TARGET_FILE:ringscale>
                 $<TARGET_FILE:ringscale-stats> ${MPIEXEC_EXECUTABLE} ${e2e_out}/weak_study)
set_tests_properties(e2e_weak_attention PROPERTIES LABELS "e2e;mpi"
                     ENVIRONMENT "${RINGSCALE_MPI_ENV}" TIMEOUT 300 PROCESSORS 2)
# The long-context preset plans its 20 cases (the study itself: README, about a minute at np=4).
add_test(NAME e2e_long_context_preset
         COMMAND bash -c "$<TARGET_FILE:ringscale> ${CMAKE_SOURCE_DIR}/jobs/presets/long_context.ini --dry-run -o ${e2e_out}/long_context | grep -q '^case 19: context_parallel .*seq-len=2K.*variant=hybrid'")
set_tests_properties(e2e_long_context_preset PROPERTIES LABELS e2e ENVIRONMENT "${RINGSCALE_MPI_ENV}")
