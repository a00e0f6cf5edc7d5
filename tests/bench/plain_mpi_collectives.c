/* The plain MPI baseline for tests/bench/collectives_vs_mpi.sh: the same operation, the same
 * float32 buffers, a barrier before each iteration and the slowest rank's time, as a user
 * would write it without ringscale.
 * allreduce_inplace: MPI_Allreduce(MPI_IN_PLACE, ...) on one buffer; as ringscale, the input is
 * restored (untimed, before the barrier) only when another sum could pass 1e30.
 * usage: bench_plain_mpi allreduce|allreduce_inplace|sendrecv BYTES WARMUP ITERS
 *        -> prints "op bytes busbw_GBps" */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5) {
        if (rank == 0)
            fprintf(stderr, "usage: %s allreduce|allreduce_inplace|sendrecv BYTES WARMUP ITERS\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    const int in_place = strcmp(argv[1], "allreduce_inplace") == 0;
    const int is_allreduce = in_place || strcmp(argv[1], "allreduce") == 0;
    const int count = (int)(atol(argv[2]) / 4), warmup = atoi(argv[3]), iters = atoi(argv[4]);
    float* send = malloc((size_t)count * 4);
    float* recv = malloc((size_t)count * 4);
    for (int i = 0; i < count; ++i)
        send[i] = (float)((rank + i) % 7);
    double* times = malloc(sizeof(double) * (size_t)iters);
    double bound = 1e31; /* largest |value| in the in-place buffer: restore at once */
    for (int it = 0; it < warmup + iters; ++it) {
        if (in_place && bound * size > 1e30) {
            memcpy(recv, send, (size_t)count * 4);
            bound = 6;
        }
        bound *= size;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (in_place)
            MPI_Allreduce(MPI_IN_PLACE, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (is_allreduce)
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Sendrecv(send, count, MPI_FLOAT, (rank + 1) % size, 0, recv, count, MPI_FLOAT,
                         (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t = MPI_Wtime() - t0, slowest;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it >= warmup)
            times[it - warmup] = slowest;
    }
    qsort(times, (size_t)iters, sizeof(double), cmp);
    double median = iters % 2 ? times[iters / 2] : 0.5 * (times[iters / 2 - 1] + times[iters / 2]);
    double factor = is_allreduce ? 2.0 * (size - 1) / size : 1.0;
    if (rank == 0)
        printf("%s %ld %.4f\n", argv[1], (long)count * 4,
               (double)count * 4 / median / 1e9 * factor);
    free(send);
    free(recv);
    free(times);
    MPI_Finalize();
    return 0;
}
