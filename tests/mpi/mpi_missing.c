/*
 * mpi_missing.c - a rank that does not come: the others must get an error
 * and a message in bounded time (SCOPE_PROFILER_MPI_TIMEOUT), never hang.
 *   mpi_missing PATH no-setup        rank 2 never calls sp_setup
 *   mpi_missing PATH late-finalize   rank 2 reaches sp_finalize long after
 *                                    the others gave up waiting for it
 * Every rank prints "rank R setup=S finalize=F" and exits 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 2 ? argv[2] : "no-setup";
    int setup = -1, finalize = -1;
    if (!(rank == 2 && strcmp(mode, "no-setup") == 0)) setup = sp_setup(argv[1]);
    sp_region_begin("work");
    sp_region_end("work");
    if (rank == 2 && strcmp(mode, "late-finalize") == 0) sleep(4);
    if (setup != -1) finalize = sp_finalize();
    printf("rank %d setup=%d finalize=%d\n", rank, setup, finalize);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
