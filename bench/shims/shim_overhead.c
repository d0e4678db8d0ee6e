/*
 * shim_overhead.c - what one begin/end pair costs through each API shim,
 * against the native by-name pair in the same run (issue 33's goal: a
 * shim pair costs at most the native by-name pair + 5 ns).
 *
 *     sp_bench_shim_overhead [pairs] [rounds]     (defaults 1000000, 9)
 *
 * Each round runs every path once, each in a session of its own (sp_setup
 * with write_file=0 and quiet=1: the shims use the running session,
 * nothing is written), recording `pairs` pairs of one region; the order
 * rotates from round to round so that a noisy neighbour hits all paths
 * alike; each path's figure is its best round.
 * Rows: native by-name (sp_region_begin/end), native handle (sp_begin/
 * sp_end), GPTLstart/GPTLstop, GPTLstart_handle/GPTLstop_handle,
 * cali_begin_region/cali_end_region (CALI_MARK_BEGIN/END),
 * likwid_markerStartRegion/StopRegion. A measurement, not a test: the exit
 * status is 0 either way. Run it from an optimised build.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <caliper/cali.h>
#include <gptl.h>

#include "scope_profiler.h"

/* LIKWID's marker functions, as LIKWID's likwid.h declares them (no header
 * of ours may be named like LIKWID's). */
void likwid_markerInit(void);
void likwid_markerClose(void);
int likwid_markerStartRegion(const char *regionTag);
int likwid_markerStopRegion(const char *regionTag);

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
}

typedef struct path {
    const char *what;
    void (*pairs)(int64_t n);
    double best;
} path;

static int region_handle;
static int gptl_handle;

static void native_name(int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        sp_region_begin("kernel");
        sp_region_end("kernel");
    }
}

static void native_handle(int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        sp_begin(region_handle);
        sp_end(region_handle);
    }
}

static void gptl_name(int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        GPTLstart("kernel");
        GPTLstop("kernel");
    }
}

static void gptl_handle_pairs(int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        GPTLstart_handle("kernel", &gptl_handle);
        GPTLstop_handle("kernel", &gptl_handle);
    }
}

static void caliper(int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        CALI_MARK_BEGIN("kernel");
        CALI_MARK_END("kernel");
    }
}

static void likwid(int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        likwid_markerStartRegion("kernel");
        likwid_markerStopRegion("kernel");
    }
}

int main(int argc, char **argv) {
    int64_t pairs = argc > 1 ? atoll(argv[1]) : 1000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (pairs <= 0 || rounds <= 0) {
        fprintf(stderr, "usage: sp_bench_shim_overhead [pairs > 0] [rounds > 0]\n");
        return 2;
    }
    path paths[] = {{"native by-name", native_name, -1},   {"native handle", native_handle, -1},
                    {"GPTLstart/stop", gptl_name, -1},     {"GPTL handle", gptl_handle_pairs, -1},
                    {"cali_begin/end_region", caliper, -1}, {"likwid_marker", likwid, -1}};
    size_t count = sizeof paths / sizeof paths[0];
    region_handle = sp_region("kernel");
    for (int round = 0; round < rounds; round++) {
        /* One session per path and round, in an order that rotates, so
         * that each session records into memory the previous one freed
         * (warm, as in bench/overhead) and no path is always first. */
        for (size_t k = 0; k < count; k++) {
            path *p = &paths[(k + (size_t)round) % count];
            sp_options options;
            sp_options_init(&options);
            options.write_file = 0;
            options.quiet = 1;
            if (sp_setup_with_options(&options) != SP_OK) return 1;
            GPTLinitialize();
            likwid_markerInit();
            p->pairs(pairs / 10); /* warm this path's caches */
            int64_t start = now_ns();
            p->pairs(pairs);
            double ns = (double)(now_ns() - start) / (double)pairs;
            if (p->best < 0 || ns < p->best) p->best = ns;
            likwid_markerClose();
            GPTLfinalize();
            sp_finalize();
        }
    }
    printf("ns per begin/end pair, best of %d rounds of %lld pairs\n", rounds, (long long)pairs);
    for (size_t p = 0; p < count; p++) {
        double over = paths[p].best - paths[0].best;
        printf("  %-24s %7.1f ns   %+6.1f ns over native by-name%s\n", paths[p].what,
               paths[p].best, over,
               p < 2 ? "" : over <= 5.0 ? "   goal met (<= +5 ns)" : "   goal NOT met (> +5 ns)");
    }
    return 0;
}
