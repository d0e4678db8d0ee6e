/* mpi_consumer: every rank of an MPI job records regions through the
 * installed library; sp_finalize writes one file for the whole job, named by
 * argv[1]. Rank r records "mpi_consumer_all" once and "mpi_consumer_rank<r>"
 * r+1 times, so the file shows which rows came from which rank.
 *
 * Set-up goes through sp_setup_mpi (scope_profiler_mpi.h) so the installed
 * MPI header is compiled and its entry point linked. Any failure aborts the
 * whole job: a rank that returned early would leave the others blocked in
 * the collective sp_finalize. */
#include <scope_profiler.h>
#include <scope_profiler_mpi.h>

#include <mpi.h>
#include <stdio.h>

static void fail(int rank, const char *what, int status) {
    fprintf(stderr, "mpi_consumer rank %d: %s: %s (%s)\n", rank, what, sp_status_name(status),
            sp_error_string(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2) {
        if (rank == 0) fprintf(stderr, "usage: %s <output.h5>\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    int status = sp_setup_mpi(MPI_COMM_WORLD, &options);
    if (status != SP_OK) fail(rank, "sp_setup_mpi", status);

    if ((status = sp_region_begin("mpi_consumer_all")) != SP_OK) fail(rank, "begin", status);
    if ((status = sp_region_end("mpi_consumer_all")) != SP_OK) fail(rank, "end", status);
    char own[32];
    snprintf(own, sizeof own, "mpi_consumer_rank%d", rank);
    for (int i = 0; i <= rank; ++i) {
        if ((status = sp_region_begin(own)) != SP_OK) fail(rank, "begin", status);
        if ((status = sp_region_end(own)) != SP_OK) fail(rank, "end", status);
    }

    if ((status = sp_finalize()) != SP_OK) fail(rank, "sp_finalize", status);
    MPI_Finalize();
    return 0;
}
