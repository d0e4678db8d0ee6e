/*
 * read_bench.c - wall time and peak memory of reading one profile through
 * the public results API, summary-only first (so its peak RSS is not
 * hidden by the full read's), then full.
 *
 * Usage: read_bench FILE [repeats]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "scope_profiler_results.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

static int run(const char *path, int flags, const char *label, int repeats) {
    double best = 1e30;
    unsigned long long calls = 0;
    for (int r = 0; r < repeats; r++) {
        char msg[1024];
        sp_results *res = NULL;
        double t0 = now_s();
        int st = sp_results_open(path, flags, &res, msg, sizeof msg);
        double t1 = now_s();
        if (st != SP_OK) {
            fprintf(stderr, "%s: %s\n", label, msg);
            return 1;
        }
        calls = 0;
        for (size_t row = 0; row < sp_results_row_count(res); row++)
            calls += sp_results_row_calls(res, row);
        sp_results_close(res);
        if (t1 - t0 < best) best = t1 - t0;
    }
    printf("%-13s %10.3f s  %12llu calls  peak RSS so far %8ld KiB\n", label, best, calls,
           peak_rss_kib());
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [repeats]\n", argv[0]);
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    if (repeats < 1) repeats = 1;
    if (run(argv[1], SP_RESULTS_SUMMARY_ONLY, "summary-only", repeats)) return 1;
    return run(argv[1], 0, "full", repeats);
}
