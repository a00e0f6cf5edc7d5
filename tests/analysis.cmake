# ringscale-stats (analysis/) tests. The fixture writes synthetic ringscale/2 (or /1) files; it is a
# test fixture, not the launcher's writer.
add_library(ringscale_analysis_fixture STATIC ${CMAKE_CURRENT_LIST_DIR}/analysis_fixture.cpp)
target_link_libraries(ringscale_analysis_fixture PUBLIC ringscale_analysis)
target_include_directories(ringscale_analysis_fixture PUBLIC ${CMAKE_CURRENT_LIST_DIR})

foreach(t stats_descriptive stats_rank_tests stats_bootstrap stats_model stats_model_multi stats_scaling
          stats_hierarchical)
    ringscale_unit_test(test_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_${t}.cpp
                        LIBS ringscale_analysis)
endforeach()
foreach(t analysis_reader analysis_cases analysis_summary analysis_compare analysis_table
          analysis_report analysis_peak analysis_hostile analysis_schema analysis_resources
          analysis_profile analysis_model_multi analysis_crossover)
    ringscale_unit_test(test_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_${t}.cpp
                        LIBS ringscale_analysis ringscale_analysis_fixture)
endforeach()

target_compile_definitions(test_analysis_schema PRIVATE
                           RINGSCALE_TEST_DATA_DIR="${CMAKE_CURRENT_LIST_DIR}/data")

# Generator of synthetic results files for the CLI test and the 1,000-file benchmark.
add_executable(bench_gen_results ${CMAKE_CURRENT_LIST_DIR}/bench/gen_results.cpp)
target_link_libraries(bench_gen_results PRIVATE ringscale_analysis_fixture)

add_test(NAME stats_cli
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/stats_cli_test.sh $<TARGET_FILE:ringscale-stats>
                 $<TARGET_FILE:bench_gen_results>)
set_tests_properties(stats_cli PROPERTIES LABELS unit TIMEOUT 300)
