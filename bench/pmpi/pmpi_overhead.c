/*
 * pmpi_overhead.c - what a wrapped MPI call costs over the bare call.
 *
 *     SCOPE_PROFILER_FILE=/tmp/b.h5 mpirun -np 1 sp_bench_pmpi_overhead [CALLS] [ROUNDS]
 *
 * Linked with libscopeprofiler_pmpi and with no profiler calls: MPI_Init
 * starts the session, so every MPI_* call below is recorded (trace mode
 * unless SCOPE_PROFILER_MODE says otherwise). The baseline is the same
 * call through PMPI_* (the bare call) in the same run: per round, CALLS
 * calls each way, alternating, and the median over ROUNDS rounds of the
 * per-call times is printed, with the difference (the wrapper's cost:
 * key, cached handle, sp_begin/sp_end) and the ratio. The calls are the
 * cheapest MPI has (on MPI_COMM_SELF, a NULL request), so the difference
 * is not hidden by communication.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { OP_TEST, OP_ALLREDUCE, OP_BCAST, OP_SENDRECV, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"test(null request)", "allreduce(self, 8 B)",
                                               "bcast(self, 64 B)", "sendrecv(self, 4 B)"};

/* `calls` calls of op, through MPI_* (wrapped) or PMPI_* (bare). */
static double run(int op, int wrapped, long calls) {
    double in = 1.0, out = 0.0, buf[8] = {0};
    int flag = 0, a = 1, b = 0;
    MPI_Request none = MPI_REQUEST_NULL;
    double t0 = now_ns();
    for (long i = 0; i < calls; i++) {
        switch (op) {
        case OP_TEST:
            if (wrapped) MPI_Test(&none, &flag, MPI_STATUS_IGNORE);
            else PMPI_Test(&none, &flag, MPI_STATUS_IGNORE);
            break;
        case OP_ALLREDUCE:
            if (wrapped) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
            else PMPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
            break;
        case OP_BCAST:
            if (wrapped) MPI_Bcast(buf, 8, MPI_DOUBLE, 0, MPI_COMM_SELF);
            else PMPI_Bcast(buf, 8, MPI_DOUBLE, 0, MPI_COMM_SELF);
            break;
        default:
            if (wrapped)
                MPI_Sendrecv(&a, 1, MPI_INT, 0, 1, &b, 1, MPI_INT, 0, 1, MPI_COMM_SELF,
                             MPI_STATUS_IGNORE);
            else
                PMPI_Sendrecv(&a, 1, MPI_INT, 0, 1, &b, 1, MPI_INT, 0, 1, MPI_COMM_SELF,
                              MPI_STATUS_IGNORE);
        }
    }
    return (now_ns() - t0) / (double)calls;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 20000;
    int rounds = argc > 2 ? atoi(argv[2]) : 25;
    if (calls < 1 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: sp_bench_pmpi_overhead [CALLS>0] [ROUNDS 1..1000]\n");
        MPI_Finalize();
        return 2;
    }
    double bare[1000], wrapped[1000], diff[1000];
    printf("%-22s %10s %10s %10s %7s   (median of %d rounds x %ld calls)\n", "call", "bare ns",
           "wrapped ns", "overhead", "ratio", rounds, calls);
    for (int op = 0; op < OP_COUNT; op++) {
        run(op, 1, calls / 10 + 1); /* warm-up: the name is registered once */
        run(op, 0, calls / 10 + 1);
        for (int r = 0; r < rounds; r++) {
            bare[r] = run(op, 0, calls);
            wrapped[r] = run(op, 1, calls);
            diff[r] = wrapped[r] - bare[r];
        }
        qsort(bare, (size_t)rounds, sizeof *bare, cmp_double);
        qsort(wrapped, (size_t)rounds, sizeof *wrapped, cmp_double);
        qsort(diff, (size_t)rounds, sizeof *diff, cmp_double);
        double b = bare[rounds / 2], w = wrapped[rounds / 2];
        printf("%-22s %10.1f %10.1f %10.1f %7.2f\n", op_names[op], b, w, diff[rounds / 2], w / b);
    }
    MPI_Finalize();
    return 0;
}
