/*
 * inst_mpi_seen.c - an MPI program built with -finstrument-functions and
 * linked with libscopeprofiler_instrument that never calls the profiler and
 * calls no new function after MPI_Init (tests/instrument, case mpi-seen,
 * label mpi): step and leaf run once before MPI_Init (a serial set-up) and
 * once after. The core's MPI_Finalize hook is then asked for at the end of
 * an already-seen call (spn_mpi.c), not at a new function, so the ranks
 * still write ONE file for the job from inside MPI_Finalize; without that,
 * each rank wrote its own file at exit. main is still open at
 * MPI_Finalize: it is left out, step -> leaf are each rank's roots.
 */
#include <mpi.h>
#include <time.h>

static volatile int sink;

static __attribute__((noinline)) int leaf(int x) { return x + (sink & 1); }

/* In MPI (after MPI_Init): wait 2 ms first, longer than the period between
 * two asks of one thread (SPN_MPI_PERIOD_NS, 1 ms), so that leaf's end asks
 * again whatever the time MPI_Init took; nanosleep is not instrumented. */
__attribute__((noinline)) void step(int in_mpi, int rank) {
    int sum = rank;
    if (in_mpi) {
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    sink = leaf(sum);
}

int main(int argc, char **argv) {
    step(0, 0);
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    step(1, rank);
    MPI_Finalize();
    return 0;
}
