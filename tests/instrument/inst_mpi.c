/*
 * inst_mpi.c - an MPI program built with -finstrument-functions and linked
 * with libscopeprofiler_instrument (tests/instrument, label mpi): the
 * session starts before MPI_Init; one sp_finalize before MPI_Finalize makes
 * the ranks write one file for the job. main is still open then: it is
 * left out, and each rank's exchange -> leaf are its roots.
 */
#include <mpi.h>

#include "scope_profiler.h"

static volatile int sink;

static __attribute__((noinline)) int leaf(int x) { return x + (sink & 1); }

__attribute__((noinline)) void exchange(int rank) {
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    sink = leaf(sum);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    exchange(rank);
    int status = sp_finalize();
    MPI_Finalize();
    return status == SP_ERR_OPEN_AT_FINALIZE || status == SP_OK ? 0 : 1;
}
