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
 *   MODE "bulk": rank r records (r + 1) * 70000 + 123 calls ("step" with
 *     nine nested "leaf" calls each): enough for compressed event columns,
 *     ranks of different sizes, and chunks shared by two ranks; then a
 *     second thread records "worker" (r + 1) * 1000 times (thread ids and
 *     a thread table in the file). A failed
 *     sp_finalize is printed ("rank N: finalize failed: NAME") and the
 *     program still calls MPI_Finalize and exits 3, so a test can see that
 *     EVERY rank got the error and none hung.
 *   MODE "nothing": no rank records anything (an empty job's file); failures
 *     reported as in "bulk".
 *   MODE "private": like "bulk", but every rank first moves into a folder
 *     of its own ("rank<r>", created) and OUTPUT should be relative: the
 *     ranks then do not share the output directory, as with node-local
 *     storage on a multi-node job. The file must still hold every rank.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
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

static void *worker(void *arg) {
    int rank = *(const int *)arg;
    for (int i = 0; i < (rank + 1) * 1000; i++) {
        sp_region_begin("worker");
        sp_region_end("worker");
    }
    return NULL;
}

static void record_bulk(int rank) {
    long calls = (rank + 1) * 70000L + 123, done = 0;
    while (done < calls) {
        sp_region_begin("step");
        done++;
        for (int j = 0; j < 9 && done < calls; j++, done++) {
            sp_region_begin("leaf");
            sp_region_end("leaf");
        }
        sp_region_end("step");
    }
    /* after the main thread's calls, so the threads attach in one order */
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, &rank) == 0) pthread_join(thread, NULL);
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(argv[2], "private") == 0) {
        char own[32];
        snprintf(own, sizeof own, "rank%d", rank);
        if ((mkdir(own, 0755) != 0 && access(own, F_OK) != 0) || chdir(own) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
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
    int bulk = strcmp(argv[2], "bulk") == 0 || strcmp(argv[2], "private") == 0;
    int nothing = strcmp(argv[2], "nothing") == 0;
    if (bulk) record_bulk(rank);
    else if (!nothing) record(rank, size);
    bulk = bulk || nothing;
    if (bulk) {
        status = sp_finalize();
        if (status != SP_OK) {
            printf("rank %d: finalize failed: %s: %s\n", rank, sp_status_name(status),
                   sp_last_error_message());
            fflush(stdout);
        }
        MPI_Finalize();
        return status == SP_OK ? 0 : 3;
    }
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
