# Slurm: a scaling study submitted with slurm/sweep to a real Slurm started on localhost
# (slurm-wlm and munge installed when missing; needs root). The report job needs
# ringscale-stats, so the test exists only where that target does.
if(TARGET ringscale-stats)
    add_test(NAME slurm_sweep
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/slurm/slurm_sweep.sh $<TARGET_FILE:ringscale>
                     $<TARGET_FILE:ringscale-stats> ${PROJECT_SOURCE_DIR})
    set_tests_properties(slurm_sweep PROPERTIES LABELS slurm TIMEOUT 420 RUN_SERIAL TRUE)
else()
    message(STATUS "slurm_sweep test: needs the ringscale-stats target")
endif()
