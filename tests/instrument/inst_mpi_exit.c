/*
 * inst_mpi_exit.c - an MPI program built with -finstrument-functions and
 * linked with libscopeprofiler_instrument that never calls the profiler
 * (tests/instrument, label mpi): the session starts before MPI_Init, and
 * the first function met after MPI_Init has the core put its hook on
 * MPI_COMM_SELF, so the profile is written from inside MPI_Finalize, ONE
 * file for the job. main is still open then: it is left out, and each
 * rank's exchange -> leaf are its roots. Also linked with the PMPI
 * wrappers (case mpi-exit-pmpi): they see a session they did not start and
 * leave it to the hook, so it is finalized once.
 */
#include <mpi.h>

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
    MPI_Finalize();
    return 0;
}
