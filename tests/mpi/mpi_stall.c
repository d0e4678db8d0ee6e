/*
 * mpi_stall.c - a rank that stops answering inside sp_finalize, after the
 * barrier every rank passed (issue 29 item 5). Built with fault injection:
 * the harness sets SCOPE_PROFILER_TEST_STALL=2:PHASE:sleep, so job rank 2
 * sleeps forever when its finalize reaches PHASE. The other ranks must
 * come back from sp_finalize within the timeout (SCOPE_PROFILER_MPI_TIMEOUT)
 * and say why on stderr. Ranks 0 and 1 then print
 *   "rank R finalize=S seconds=T"
 * meet each other (a communicator without rank 2, split before the
 * profile) and, when rank 2 sleeps, rank 0 ends the job with MPI_Abort:
 * the stalled rank would otherwise keep MPI_Finalize waiting forever.
 *   mpi_stall PATH
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scope_profiler.h"

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm healthy;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 2 ? MPI_UNDEFINED : 0, rank, &healthy);
    int setup = sp_setup(argc > 1 ? argv[1] : "stall.h5");
    for (int i = 0; i < 100; i++) {
        sp_region_begin("work");
        sp_region_begin("inner");
        sp_region_end("inner");
        sp_region_end("work");
    }
    double start = seconds_now();
    int finalize = sp_finalize();
    printf("rank %d setup=%d finalize=%d seconds=%.1f\n", rank, setup, finalize,
           seconds_now() - start);
    fflush(stdout);
    const char *stall = getenv("SCOPE_PROFILER_TEST_STALL");
    if (healthy != MPI_COMM_NULL && stall && strstr(stall, ":sleep")) {
        MPI_Barrier(healthy);
        if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 0);
    }
    if (healthy != MPI_COMM_NULL) MPI_Comm_free(&healthy);
    MPI_Finalize();
    return 0;
}
