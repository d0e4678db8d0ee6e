/*
 * mpi_record.c - an MPI program for the job tests.
 *
 * Usage: mpi_record OUTPUT MODE
 *   MODE "regions": every rank records "common" (rank+1) times with a nested
 *     "inner" each time; rank r also records "rank.r" r+1 times; rank 1
 *     records nothing at all (when the job has >= 3 ranks); only rank 3
 *     records "rank3.only". Then sp_finalize, then MPI_Finalize.
 *   MODE "forget": records, then calls MPI_Finalize WITHOUT sp_finalize;
 *     the profiler must write the file from inside MPI_Finalize.
 *   MODE "comm": like "regions" but sets up on a duplicate of
 *     MPI_COMM_WORLD through sp_setup_mpi.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"
#include "scope_profiler_mpi.h"

static void record(int rank, int size) {
    if (rank == 1 && size >= 3) return; /* a rank that records nothing */
    for (int i = 0; i <= rank; i++) {
        sp_region_begin("common");
        sp_region_begin("inner");
        sp_region_end("inner");
        sp_region_end("common");
    }
    char own[32];
    snprintf(own, sizeof own, "rank.%d", rank);
    for (int i = 0; i <= rank; i++) {
        sp_region_begin(own);
        sp_region_end(own);
    }
    if (rank == 3) {
        sp_region_begin("rank3.only");
        sp_region_end("rank3.only");
    }
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.label = "mpi-test";
    int status;
    MPI_Comm dup = MPI_COMM_NULL;
    if (strcmp(argv[2], "comm") == 0) {
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        status = sp_setup_mpi(dup, &options);
    } else {
        status = sp_setup_with_options(&options);
    }
    if (status != SP_OK) {
        fprintf(stderr, "rank %d: setup failed: %s\n", rank, sp_error_string(status));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    record(rank, size);
    if (strcmp(argv[2], "forget") != 0) {
        status = sp_finalize();
        if (status != SP_OK) {
            fprintf(stderr, "rank %d: finalize failed: %s\n", rank, sp_error_string(status));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
