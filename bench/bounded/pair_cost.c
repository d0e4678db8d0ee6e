/*
 * pair_cost.c - what one handle begin/end pair costs while a trace records,
 * split the way the spill question needs it (issue 31): wall and process
 * CPU time per pair of the loop alone, the CPU split into user and system
 * time (the spill's page-cache copy and the first touch of event memory
 * are system time), minor faults and context switches (the writer thread
 * waiting on the disk shows as voluntary switches). Every thread's time is
 * counted (getrusage RUSAGE_SELF), so a writer thread's work is in it.
 * Bound, clock, mode and spill thread come from the environment
 * (SCOPE_PROFILER_BUFFER_LIMIT, ...), as a user's run takes them.
 *
 *   sp_bench_pair_cost PAIRS OUTPUT [nofinalize]
 *
 * Prints "RESULT wall W user U sys S cpu C minflt F vcs V ivcs I" (ns per
 * pair, counts for the loop) and " fin SECONDS st STATUS" after finalize;
 * with "nofinalize" the process ends right after the loop (for long runs
 * whose finalize is not the question; the spill file vanishes with it).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "scope_profiler.h"

static double seconds(struct timeval t) { return (double)t.tv_sec + 1e-6 * (double)t.tv_usec; }

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: sp_bench_pair_cost PAIRS OUTPUT [nofinalize]\n");
        return 2;
    }
    long pairs = atol(argv[1]);
    if (pairs <= 0 || sp_setup(argv[2]) != SP_OK) return 3;
    int region = sp_region("solve");
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    double w0 = now_s();
    for (long i = 0; i < pairs; i++) {
        sp_begin(region);
        sp_end(region);
    }
    double w1 = now_s();
    getrusage(RUSAGE_SELF, &b);
    double n = (double)pairs, user = seconds(b.ru_utime) - seconds(a.ru_utime),
           sys = seconds(b.ru_stime) - seconds(a.ru_stime);
    printf("RESULT wall %.2f user %.2f sys %.2f cpu %.2f minflt %ld vcs %ld ivcs %ld",
           1e9 * (w1 - w0) / n, 1e9 * user / n, 1e9 * sys / n, 1e9 * (user + sys) / n,
           b.ru_minflt - a.ru_minflt, b.ru_nvcsw - a.ru_nvcsw, b.ru_nivcsw - a.ru_nivcsw);
    fflush(stdout);
    if (argc > 3 && strcmp(argv[3], "nofinalize") == 0) {
        printf("\n");
        fflush(stdout);
        _exit(0);
    }
    int status = sp_finalize();
    printf(" fin %.2f st %d\n", now_s() - w1, status);
    return status == SP_OK ? 0 : 1;
}
