/*
 * bounded_bench.c - one long trace session: CALLS region calls (handle
 * pairs, half of them nested one deep) with a memory limit, then finalize.
 * Prints ns per call while recording, the finalize time and the process's
 * peak resident set (getrusage, finalize included).
 *
 * Usage: sp_bench_bounded CALLS LIMIT_BYTES flush|drop PATH
 *   LIMIT_BYTES 0 = unlimited (today's in-memory path)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "scope_profiler.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: sp_bench_bounded CALLS LIMIT_BYTES flush|drop PATH\n");
        return 2;
    }
    long long calls = atoll(argv[1]);
    sp_options o;
    sp_options_init(&o);
    o.file_path = argv[4];
    o.quiet = 1;
    o.buffer_limit_bytes = (size_t)atoll(argv[2]);
    o.overflow = strcmp(argv[3], "drop") == 0 ? SP_OVERFLOW_DROP : SP_OVERFLOW_FLUSH;
    if (sp_setup_with_options(&o) != SP_OK) return 3;
    int outer = sp_region("outer"), inner = sp_region("inner");
    double t0 = now_s();
    for (long long i = 0; i < calls / 2; i++) {
        sp_begin(outer);
        sp_begin(inner);
        sp_end(inner);
        sp_end(outer);
    }
    double t1 = now_s();
    int status = sp_finalize();
    double t2 = now_s();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%-9s limit %5lld MiB: %lld calls, %.2f ns/call recording, finalize %.2f s, "
           "peak RSS %.0f MiB, status %d\n",
           o.buffer_limit_bytes ? argv[3] : "unlimited", atoll(argv[2]) >> 20, calls,
           (t1 - t0) * 1e9 / (double)calls, t2 - t1, ru.ru_maxrss / 1024.0, status);
    return status == SP_OK ? 0 : 1;
}
