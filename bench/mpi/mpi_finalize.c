/*
 * mpi_finalize.c - what the collective finalize costs.
 *
 *     mpirun -np R sp_bench_mpi_finalize CALLS_PER_RANK OUTPUT.h5
 *
 * Every rank records CALLS_PER_RANK calls (a root region with nested
 * leaves, like a time-stepping loop), then all ranks time sp_finalize
 * (collective: gather, rank 0 writes ONE file). Rank 0 prints one line:
 *   ranks, calls per rank, total calls, finalize seconds (slowest rank),
 *   rank 0 peak RSS (MiB) and rank 0 RSS growth during finalize (MiB).
 * run.sh compares 4 ranks x 1M calls with 1 rank x 4M calls in one run:
 * the same file, but rank 0 must not hold the other ranks' events.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "scope_profiler.h"

static double peak_rss_mib(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0) fprintf(stderr, "usage: sp_bench_mpi_finalize CALLS_PER_RANK OUTPUT.h5\n");
        MPI_Finalize();
        return 2;
    }
    long long calls = atoll(argv[1]);
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[2];
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    int step = sp_region("step"), leaf = sp_region("leaf");
    const long long leaves_per_step = 99;
    for (long long done = 0; done < calls;) {
        sp_begin(step);
        done++;
        for (long long j = 0; j < leaves_per_step && done < calls; j++, done++) {
            sp_begin(leaf);
            sp_end(leaf);
        }
        sp_end(step);
    }
    double before_mib = peak_rss_mib();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int status = sp_finalize();
    double elapsed = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double after_mib = peak_rss_mib();
    if (rank == 0)
        printf("ranks %d  calls/rank %lld  total %lld  finalize %.3f s  rank0 peak %.1f MiB  "
               "rank0 growth in finalize %.1f MiB  status %s\n",
               size, calls, calls * size, slowest, after_mib, after_mib - before_mib,
               sp_status_name(status));
    MPI_Finalize();
    return status == SP_OK ? 0 : 1;
}
