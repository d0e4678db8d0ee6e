/*
 * bounded_mpi.c - every rank records a bounded trace that flushes (limit
 * from the environment), then the job writes one file through rank 0:
 * rank r records 100000 * (r + 1) outer calls, each with one nested call.
 * Usage: mpirun -np N bounded_mpi PATH
 */
#include <mpi.h>
#include <stdio.h>

#include "mpi/scope_profiler_mpi.h"
#include "scope_profiler.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int status = sp_setup(argc > 1 ? argv[1] : "bounded_mpi.h5");
    int outer = sp_region("outer"), inner = sp_region(rank % 2 ? "inner.odd" : "inner.even");
    for (long i = 0; i < 100000L * (rank + 1); i++) {
        sp_begin(outer);
        sp_begin(inner);
        sp_end(inner);
        sp_end(outer);
    }
    if (status == SP_OK) status = sp_finalize();
    printf("rank %d status=%d\n", rank, status);
    MPI_Finalize();
    return status == SP_OK ? 0 : 1;
}
