/*
 * mpi_finalize.c - what the collective finalize costs.
 *
 *     mpirun -np R sp_bench_mpi_finalize CALLS_PER_RANK OUTPUT.h5
 *
 * Default settings (report and summary printed on rank 0; SP_BENCH_QUIET=1
 * turns both off, which is not what users run). Every rank records
 * CALLS_PER_RANK calls (a root region with nested
 * leaves, like a time-stepping loop), then all ranks time sp_finalize
 * (collective: ONE file for the job, through the rank-0 funnel or, in a
 * parallel-HDF5 build, every rank writing its part; SCOPE_PROFILER_MPI_WRITER
 * =funnel forces the funnel). Rank 0 prints one line:
 *   writer, ranks, calls per rank, total calls, finalize seconds (slowest
 *   rank), rank 0 peak RSS and its growth during finalize (MiB), the largest
 *   peak RSS and growth of the other ranks (MiB), file bytes per call.
 * run.sh runs np = 1, 2, 4, 8 with both writers at fixed calls per rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

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
    /* the default run prints the report and the summary (what users pay);
     * SP_BENCH_QUIET=1 measures the run without them, for comparison */
    const char *quiet = getenv("SP_BENCH_QUIET");
    options.quiet = quiet && strcmp(quiet, "1") == 0;
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
    /* the other ranks' worst peak and growth (rank 0 sends zeros) */
    double mine[2] = {rank ? after_mib : 0, rank ? after_mib - before_mib : 0}, others[2] = {0, 0};
    MPI_Reduce(mine, others, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const char *writer = getenv("SCOPE_PROFILER_MPI_WRITER");
        struct stat st;
        double bytes_per_call = stat(argv[2], &st) == 0 ? (double)st.st_size / (double)(calls * size) : 0;
        printf("%s writer %-8s ranks %d  calls/rank %lld  finalize %.3f s  rank0 peak %.1f MiB "
               "(+%.1f in finalize)  others peak %.1f MiB (+%.1f)  %.2f B/call  %s\n",
               options.quiet ? "quiet  " : "summary",
               writer && strcmp(writer, "funnel") == 0 ? "funnel" : "default", size, calls,
               slowest, after_mib, after_mib - before_mib, others[0], others[1], bytes_per_call,
               sp_status_name(status));
    }
    MPI_Finalize();
    return status == SP_OK ? 0 : 1;
}
