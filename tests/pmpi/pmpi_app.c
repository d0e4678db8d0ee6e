/*
 * pmpi_app.c - an MPI program with NO profiler calls: the plan of MPI calls
 * that check_pmpi.py expects (exact counts and bytes per rank), recorded
 * only by libscopeprofiler_pmpi (linked or preloaded). pmpi_app_f.F90 makes
 * the same calls from Fortran.
 *
 * usage: pmpi_app [plan|invalid|abort]
 *   plan     the call plan (see check_pmpi.py's expected()): every operation
 *            of pmpi/spp_ops.h at least once; prints each rank's
 *            communicators' Fortran handles (the names' comm=) as
 *            "pmpi_app: rank <r> comms world=<w> half=<h> copy=<c> whole=<x>"
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

/* The operations the first part of the plan leaves out, each message
 * received into a buffer of exactly its size (so bytes sent and bytes
 * received total the same). Receives are posted before the matching
 * synchronous and ready sends, so nothing waits on a rank that has not got
 * there yet. */
static void plan_rest(int r, int n, int *ints, int *ints2) {
    MPI_Comm world = MPI_COMM_WORLD;
    int left = (r + n - 1) % n, right = (r + 1) % n, index = 0, outcount = 0, flag = 0;
    int indices[1];
    MPI_Request req[6], nulls[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    static char bsend_buffer[1024 + 2 * MPI_BSEND_OVERHEAD];
    MPI_Buffer_attach(bsend_buffer, (int)sizeof bsend_buffer);

    MPI_Irecv(ints2, 2, MPI_INT, left, 11, world, &req[0]);
    MPI_Irecv(ints2 + 2, 3, MPI_INT, right, 12, world, &req[1]);
    MPI_Ssend(ints, 2, MPI_INT, right, 11, world);
    MPI_Ssend(ints, 3, MPI_INT, left, 12, world);
    for (int i = 0; i < 2; i++) MPI_Waitany(2, req, &index, MPI_STATUS_IGNORE);

    MPI_Irecv(ints2, 4, MPI_INT, left, 13, world, &req[0]);
    MPI_Bsend(ints, 4, MPI_INT, right, 13, world);
    MPI_Waitsome(1, req, &outcount, indices, MPI_STATUSES_IGNORE);

    MPI_Irecv(ints2, 5, MPI_INT, left, 14, world, &req[0]);
    MPI_Barrier(world); /* every receive of the ready send is posted */
    MPI_Rsend(ints, 5, MPI_INT, right, 14, world);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);

    MPI_Irecv(ints2, 6, MPI_INT, left, 15, world, &req[0]);
    MPI_Irecv(ints2 + 6, 7, MPI_INT, left, 16, world, &req[1]);
    MPI_Irecv(ints2 + 13, 8, MPI_INT, left, 17, world, &req[2]);
    MPI_Barrier(world);
    MPI_Issend(ints, 6, MPI_INT, right, 15, world, &req[3]);
    MPI_Ibsend(ints, 7, MPI_INT, right, 16, world, &req[4]);
    MPI_Irsend(ints, 8, MPI_INT, right, 17, world, &req[5]);
    MPI_Waitall(6, req, MPI_STATUSES_IGNORE);

    MPI_Testall(2, nulls, &flag, MPI_STATUSES_IGNORE);
    MPI_Testany(2, nulls, &index, &flag, MPI_STATUS_IGNORE);
    MPI_Scan(ints, ints2, 2, MPI_INT, MPI_SUM, world);
    MPI_Exscan(ints, ints2, 3, MPI_INT, MPI_SUM, world);
    void *detached = NULL;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
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
    plan_rest(r, n, ints, ints2);

    MPI_Comm half, copy, whole;
    MPI_Group group;
    MPI_Comm_split(world, r % 2, r, &half);
    int half_f = MPI_Comm_c2f(half);
    for (int i = 0; i < 2; i++) MPI_Allreduce(ints, ints2, 1, MPI_INT, MPI_SUM, half);
    MPI_Comm_free(&half);
    MPI_Comm_dup(world, &copy);
    int copy_f = MPI_Comm_c2f(copy);
    MPI_Barrier(copy);
    MPI_Comm_free(&copy);
    MPI_Comm_group(world, &group);
    MPI_Comm_create(world, group, &whole);
    int whole_f = MPI_Comm_c2f(whole);
    MPI_Group_free(&group);
    MPI_Comm_free(&whole);
    printf("pmpi_app: rank %d comms world=%d half=%d copy=%d whole=%d\n", r,
           (int)MPI_Comm_c2f(world), half_f, copy_f, whole_f);
    fflush(stdout);
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
        printf("pmpi_app: rank %d comms world=%d\n", r, (int)MPI_Comm_c2f(MPI_COMM_WORLD));
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
