/*
 * pmpi_app.c - an MPI program with NO profiler calls: the plan of MPI calls
 * that check_pmpi.py expects (exact counts and bytes per rank), recorded
 * only by libscopeprofiler_pmpi (linked or preloaded). pmpi_app_f.F90 makes
 * the same calls from Fortran.
 *
 * usage: pmpi_app [plan|invalid|abort]
 *   plan     the call plan (see check_pmpi.py's expected())
 *   abort    a few recorded calls, then MPI_Abort(MPI_COMM_WORLD, 5) on
 *            the last rank: the job must end (not hang) with an error
 *   invalid  invalid datatype and communicator with MPI_ERRORS_RETURN: the
 *            wrappers must return exactly what PMPI returns (exit 3 if not)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int invalid_args(void) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 1, y = 0;
    int wrapped = MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    int direct = PMPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    if (wrapped != direct || wrapped == MPI_SUCCESS) {
        fprintf(stderr, "MPI_Send(MPI_DATATYPE_NULL): wrapper %d, PMPI %d\n", wrapped, direct);
        return 3;
    }
    wrapped = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL);
    direct = PMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL);
    if (wrapped != direct || wrapped == MPI_SUCCESS) {
        fprintf(stderr, "MPI_Allreduce(MPI_COMM_NULL): wrapper %d, PMPI %d\n", wrapped, direct);
        return 3;
    }
    wrapped = MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD);
    direct = PMPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD);
    if (wrapped != direct || wrapped == MPI_SUCCESS) {
        fprintf(stderr, "MPI_Bcast(count -1): wrapper %d, PMPI %d\n", wrapped, direct);
        return 3;
    }
    return 0;
}

static void plan(int r, int n) {
    MPI_Comm world = MPI_COMM_WORLD;
    int left = (r + n - 1) % n, right = (r + 1) % n;
    int ints[400] = {0}, ints2[400] = {0};
    double d[16] = {0}, d2[16] = {0};
    char text[16] = "fifteen chars..";
    MPI_Request req[2];
    int *counts = malloc((size_t)n * sizeof *counts), *displs = malloc((size_t)n * sizeof *displs);
    int *ones = malloc((size_t)n * sizeof *ones), *ones_displs = malloc((size_t)n * sizeof *ones);
    int *big = calloc((size_t)(3 * n + n * (n + 1) / 2), sizeof *big); /* scatter: 3n */
    for (int i = 0; i < n; i++) {
        counts[i] = i + 1;
        displs[i] = i * (i + 1) / 2;
        ones[i] = 1;
        ones_displs[i] = i;
    }

    for (int i = 0; i < 2; i++) MPI_Barrier(world);
    for (int i = 0; i < 3; i++) MPI_Bcast(ints, 10, MPI_INT, 0, world);
    for (int i = 0; i < 5; i++) MPI_Allreduce(d, d2, 1, MPI_DOUBLE, MPI_SUM, world);
    MPI_Reduce(ints, ints2, 4, MPI_INT, MPI_SUM, 0, world);
    for (int i = 0; i < 4; i++) {
        MPI_Irecv(ints2, 100, MPI_INT, left, 7, world, &req[0]);
        MPI_Isend(ints, 100, MPI_INT, right, 7, world, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(d, 8, MPI_DOUBLE, right, 3, d2, 8, MPI_DOUBLE, left, 3, world,
                     MPI_STATUS_IGNORE);
    if (n > 1 && r == 0) MPI_Send(text, 16, MPI_CHAR, 1, 5, world);
    if (n > 1 && r == 1) MPI_Recv(text, 16, MPI_CHAR, 0, 5, world, MPI_STATUS_IGNORE);
    MPI_Irecv(ints2, 1, MPI_INT, right, 9, world, &req[0]);
    MPI_Isend(ints, 1, MPI_INT, left, 9, world, &req[1]);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    int flag = 0;
    MPI_Request none = MPI_REQUEST_NULL;
    MPI_Test(&none, &flag, MPI_STATUS_IGNORE);

    MPI_Gather(ints, 2, MPI_INT, big, 2, MPI_INT, 0, world);
    MPI_Gatherv(ints, r + 1, MPI_INT, big, counts, displs, MPI_INT, 0, world);
    MPI_Scatter(big, 3, MPI_INT, ints2, 3, MPI_INT, 0, world);
    MPI_Scatterv(big, counts, displs, MPI_INT, ints2, r + 1, MPI_INT, 0, world);
    MPI_Allgather(ints, 2, MPI_INT, big, 2, MPI_INT, world);
    MPI_Allgatherv(ints, r + 1, MPI_INT, big, counts, displs, MPI_INT, world);
    MPI_Alltoall(ints, 1, MPI_INT, big, 1, MPI_INT, world);
    MPI_Alltoallv(ints, ones, ones_displs, MPI_INT, big, ones, ones_displs, MPI_INT, world);
    MPI_Reduce_scatter(ints, ints2, ones, MPI_INT, MPI_SUM, world);

    MPI_Comm half, copy;
    MPI_Comm_split(world, r % 2, r, &half);
    for (int i = 0; i < 2; i++) MPI_Allreduce(ints, ints2, 1, MPI_INT, MPI_SUM, half);
    MPI_Comm_free(&half);
    MPI_Comm_dup(world, &copy);
    MPI_Barrier(copy);
    MPI_Comm_free(&copy);
    free(counts);
    free(displs);
    free(ones);
    free(ones_displs);
    free(big);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "plan";
    MPI_Init(&argc, &argv);
    int r = 0, n = 1, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (!strcmp(mode, "invalid")) {
        status = invalid_args();
    } else if (!strcmp(mode, "abort")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == n - 1) MPI_Abort(MPI_COMM_WORLD, 5);
        /* The other ranks wait in a call the abort must end. */
        int x = 0;
        MPI_Recv(&x, 1, MPI_INT, n - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    else {
        plan(r, n);
    }
    MPI_Finalize();
    return status;
}
