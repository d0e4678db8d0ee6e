/*
 * finalize_bench.c - what sp_finalize costs a long trace in memory and
 * time, summary included (bench/finalize/run.sh).
 *
 *     sp_bench_finalize CALLS SHAPE OUTPUT.h5
 *
 * SHAPE "flat": CALLS begin/end pairs of one region; "nested": CALLS / 3
 * iterations of a > b > c (CALLS calls over three nested regions). Default
 * settings: the default 256 MiB bound that flushes, the report and the
 * summary printed (SCOPE_PROFILER_SUMMARY=0 in the environment turns the
 * summary off, for the comparison run.sh makes). After sp_finalize the
 * program prints one line to stderr: shape, calls, finalize seconds (the
 * report and summary included), peak RSS of the whole process in MiB, the
 * write threads asked for (SCOPE_PROFILER_WRITE_THREADS, "all" when unset)
 * the size of the file written in MiB, and the CPU time finalize took
 * (user + system, every thread: on a loaded machine the wall time says
 * little, the CPU time what the work was).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "scope_profiler.h"

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[2], "flat") != 0 && strcmp(argv[2], "nested") != 0)) {
        fprintf(stderr, "usage: sp_bench_finalize CALLS flat|nested OUTPUT.h5\n");
        return 2;
    }
    long long calls = atoll(argv[1]);
    bool nested = strcmp(argv[2], "nested") == 0;
    if (sp_setup(argv[3]) != SP_OK) return 1;
    int a = sp_region("a"), b = sp_region("b"), c = sp_region("c");
    long long steps = nested ? calls / 3 : calls;
    for (long long i = 0; i < steps; i++) {
        sp_begin(a);
        if (nested) {
            sp_begin(b);
            sp_begin(c);
            sp_end(c);
            sp_end(b);
        }
        sp_end(a);
    }
    struct rusage before, usage;
    getrusage(RUSAGE_SELF, &before);
    double t0 = seconds();
    int status = sp_finalize();
    double elapsed = seconds() - t0;
    getrusage(RUSAGE_SELF, &usage);
    double cpu = (double)(usage.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                 (double)(usage.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                 (double)(usage.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6 +
                 (double)(usage.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
    const char *summary = getenv("SCOPE_PROFILER_SUMMARY");
    const char *threads = getenv("SCOPE_PROFILER_WRITE_THREADS");
    struct stat file;
    double file_mib = stat(argv[3], &file) == 0 ? (double)file.st_size / (1024.0 * 1024.0) : -1.0;
    fprintf(stderr, "%-6s %-11s calls %lld  finalize %.3f s  peak RSS %.1f MiB  threads %s  file %.1f MiB  cpu %.3f s  %s\n",
            argv[2], summary && strcmp(summary, "0") == 0 ? "summary off" : "summary on",
            steps * (nested ? 3 : 1), elapsed, usage.ru_maxrss / 1024.0,
            threads && *threads ? threads : "all", file_mib, cpu, sp_status_name(status));
    return status == SP_OK ? 0 : 1;
}
