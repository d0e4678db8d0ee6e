/*
 * aggregate_bench.c - what aggregate mode costs and holds, in ONE long
 * session per process, as a real run pays it.
 *
 *     sp_bench_aggregate pairs MODE OUT    MODE: baseline | trace | aggregate
 *
 * Records `pairs` begin/end pairs of a three-level loop nest (outer >
 * middle > inner, handles, the innermost pair being most of them) in one
 * session in MODE (baseline: the same loop with two clock_gettime per pair
 * and no profiler), then prints one line:
 *
 *   mode=<m> pairs=<n> ns_per_pair=<f> rss_kib_at_1M=<k> rss_kib_end=<k>
 *   finalize_ms=<f>
 *
 * rss_kib_at_1M is the resident set after the first million pairs (or at
 * the end for fewer), rss_kib_end after all of them, both before finalize:
 * their difference is the memory the recording grew by. finalize_ms is
 * sp_finalize with the file written to OUT (quiet, no summary).
 * run.sh starts the modes in separate processes, interleaved, cold: a
 * fresh process per measurement, so no mode runs on memory another freed.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scope_profiler.h"

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

static volatile int64_t sink;

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s pairs baseline|trace|aggregate OUT.h5\n", argv[0]);
        return 2;
    }
    int64_t pairs = strtoll(argv[1], NULL, 10);
    const char *mode = argv[2];
    bool profiled = strcmp(mode, "baseline") != 0;
    if (profiled) {
        sp_options o;
        sp_options_init(&o);
        o.file_path = argv[3];
        o.quiet = 1;
        o.mode = strcmp(mode, "aggregate") == 0 ? SP_MODE_AGGREGATE : SP_MODE_TRACE;
        if (sp_setup_with_options(&o) != SP_OK) return 1;
    }
    int outer = sp_region("bench.outer"), middle = sp_region("bench.middle"),
        inner = sp_region("bench.inner");
    /* 1 outer and 10 middle pairs per 1000 inner ones */
    const int64_t inner_per_middle = 100, middle_per_outer = 10;
    int64_t done = 0;
    long rss_at_million = -1;
    int64_t start = now_ns();
    while (done < pairs) {
        if (profiled) sp_begin(outer);
        for (int64_t m = 0; m < middle_per_outer && done < pairs; m++) {
            if (profiled) sp_begin(middle);
            for (int64_t i = 0; i < inner_per_middle && done < pairs; i++, done++) {
                if (profiled) {
                    sp_begin(inner);
                    sp_end(inner);
                } else {
                    sink += now_ns();
                    sink += now_ns();
                }
                if (done + 1 == 1000000) rss_at_million = rss_kib();
            }
            if (profiled) sp_end(middle);
        }
        if (profiled) sp_end(outer);
    }
    int64_t elapsed = now_ns() - start;
    long rss_end = rss_kib();
    if (rss_at_million < 0) rss_at_million = rss_end;
    int64_t finalize_start = now_ns();
    if (profiled && sp_finalize() != SP_OK) return 1;
    double finalize_ms = (double)(now_ns() - finalize_start) / 1e6;
    printf("mode=%s pairs=%lld ns_per_pair=%.2f rss_kib_at_1M=%ld rss_kib_end=%ld "
           "finalize_ms=%.2f\n",
           mode, (long long)pairs, (double)elapsed / (double)pairs, rss_at_million, rss_end,
           profiled ? finalize_ms : 0.0);
    return 0;
}
