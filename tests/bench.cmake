# Benchmark programs, run by hand through tests/bench/*.sh; never registered as tests.
add_executable(bench_plain_mpi ${CMAKE_CURRENT_LIST_DIR}/bench/plain_mpi_collectives.c)
target_link_libraries(bench_plain_mpi PRIVATE MPI::MPI_C)
