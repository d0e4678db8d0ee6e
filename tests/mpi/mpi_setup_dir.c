/*
 * mpi_setup_dir.c - sp_setup on an output directory that does not exist
 * (issue 30): setup itself must fail on every rank, at once, with one
 * message naming the path (rank 0 checks, every rank gets its verdict),
 * instead of a run that finds out at finalize.
 *   mpi_setup_dir DIR missing       every rank asks for DIR/none/run.h5
 *   mpi_setup_dir DIR root_missing  rank 0 asks for DIR/none/run.h5, the
 *                                   others for DIR/run.h5: all fail
 *   mpi_setup_dir DIR others_missing rank 0 asks for DIR/run.h5 (it writes
 *                                   the file), the others for a missing
 *                                   directory: all succeed, one file
 *   mpi_setup_dir DIR missing_comm  as missing, through sp_setup_mpi
 * Every rank prints "rank R setup=S active=A finalize=F" and exits 0; the
 * checker decides (check_mpi_setup_dir.py).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"
#include "scope_profiler_mpi.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 2 ? argv[2] : "missing";
    char missing[4096], present[4096];
    snprintf(missing, sizeof missing, "%s/none/run.h5", argc > 1 ? argv[1] : ".");
    snprintf(present, sizeof present, "%s/run.h5", argc > 1 ? argv[1] : ".");
    const char *path = missing;
    if (strcmp(mode, "root_missing") == 0) path = rank == 0 ? missing : present;
    if (strcmp(mode, "others_missing") == 0) path = rank == 0 ? present : missing;
    int setup;
    if (strcmp(mode, "missing_comm") == 0) {
        sp_options options;
        sp_options_init(&options);
        options.file_path = path;
        setup = sp_setup_mpi(MPI_COMM_WORLD, &options);
    } else {
        setup = sp_setup(path);
    }
    int active = sp_is_active();
    sp_region_begin("work");
    sp_region_end("work");
    int finalize = sp_finalize();
    printf("rank %d setup=%d active=%d finalize=%d\n", rank, setup, active, finalize);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
