/*
 * mpi_many_paths.c - rank 0's memory for the end-of-run summary of a job
 * whose ranks have many distinct call paths (issue 27).
 *
 *     mpirun -np R sp_bench_mpi_many_paths REGIONS OUTPUT.h5
 *
 * Every rank nests REGIONS regions three deep in every order (a in b in c
 * for all a, b, c): REGIONS^3 + REGIONS^2 + REGIONS distinct call paths per
 * rank (2,379 for 13 regions, 33,824 for 32) from only REGIONS names, so
 * the summary's paths, not the rows, are what rank 0 has to take from
 * every rank. Default settings (report and summary printed on rank 0).
 * Rank 0 prints one line: ranks, paths per rank, finalize seconds, its
 * peak RSS and the growth during finalize (MiB).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "scope_profiler.h"

static double peak_rss_mib(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024.0; /* KiB on Linux */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int regions = argc == 3 ? atoi(argv[1]) : 0;
    if (regions < 1 || regions > 1000) {
        if (rank == 0) fprintf(stderr, "usage: sp_bench_mpi_many_paths REGIONS OUTPUT.h5\n");
        MPI_Finalize();
        return 2;
    }
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[2];
    if (sp_setup_with_options(&options) != SP_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    int *ids = malloc(sizeof *ids * (size_t)regions);
    if (!ids) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < regions; i++) {
        char name[32];
        snprintf(name, sizeof name, "r%03d", i);
        ids[i] = sp_region(name);
    }
    for (int a = 0; a < regions; a++) {
        sp_begin(ids[a]);
        for (int b = 0; b < regions; b++) {
            sp_begin(ids[b]);
            for (int c = 0; c < regions; c++) {
                sp_begin(ids[c]);
                sp_end(ids[c]);
            }
            sp_end(ids[b]);
        }
        sp_end(ids[a]);
    }
    double before_mib = peak_rss_mib();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int status = sp_finalize();
    double elapsed = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double after_mib = peak_rss_mib();
    if (rank == 0) {
        long paths = (long)regions * regions * regions + (long)regions * regions + regions;
        printf("many-paths ranks %d  paths/rank %ld  finalize %.3f s  rank0 peak %.1f MiB "
               "(+%.1f in finalize)  %s\n",
               size, paths, slowest, after_mib, after_mib - before_mib, sp_status_name(status));
    }
    free(ids);
    MPI_Finalize();
    return status == SP_OK ? 0 : 1;
}
