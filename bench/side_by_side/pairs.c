/*
 * pairs.c - one configuration of the side-by-side benchmark (run.py): N
 * begin/end pairs of one region (or N pairs spread over three nested
 * regions), built against the INSTALLED library through pkg-config, as a
 * user's program is. The mode, clock and bound come from the environment
 * (SCOPE_PROFILER_MODE, _CLOCK, _BUFFER_LIMIT), so every configuration of
 * ours runs this same code.
 *
 *   pairs KIND N OUTPUT
 *     KIND: rdtsc | clock_gettime   the baselines: two readings per pair
 *           handle | byname | site | nested   ours (site: SP_REGION_BEGIN,
 *                                      the literal's handle kept per call
 *                                      site; nested: three regions, N/3
 *                                      iterations of three pairs)
 *           cxx_region | cxx_scope  compiled as C++ only (run.py's "cxx"
 *                                  program): a scope on a static region, and
 *                                  SP_SCOPE("solve") (the literal's call-site
 *                                  memo)
 *           gptl | gptl_nested     GPTL (GPTLnanotime + handles), when built
 *                                  with -DWITH_GPTL against a GPTL snapshot
 *
 * Prints one line "RESULT loop_ns_per_pair=X loop_cpu_ns_per_pair=C
 * finalize_s=Y pairs=N status=S" on stderr (C: the process's CPU time,
 * every thread's, which a loaded machine's preemption does not inflate); the summary and report go to stdout as in a user's run. The
 * finalize (our file written, or GPTL's timing file) is timed apart from
 * the loop.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#ifdef WITH_GPTL
#include <gptl.h>
#elif defined(__cplusplus)
#include <scope_profiler.hpp>
#else
#include <scope_profiler.h>
#endif

/* Written once at the end so the compiler keeps every reading. */
static volatile uint64_t sink;

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void loop_rdtsc(long n) {
    uint64_t acc = 0;
    for (long i = 0; i < n; i++) {
        uint64_t a = __rdtsc();
        uint64_t b = __rdtsc();
        acc += b - a;
    }
    sink = acc;
}

static void loop_clock_gettime(long n) {
    uint64_t acc = 0;
    struct timespec a, b;
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        acc += (uint64_t)(b.tv_nsec - a.tv_nsec);
    }
    sink = acc;
}

#ifdef WITH_GPTL
static int setup(const char *output) {
    (void)output;
    if (GPTLsetutr(GPTLnanotime) != 0) return 1;
    return GPTLinitialize();
}
static int finish(const char *output) { return GPTLpr_file(output); }

static void loop_ours(const char *kind, long n) {
    int a = 0, b = 0, c = 0;
    GPTLinit_handle("solve", &a);
    GPTLinit_handle("assemble", &b);
    GPTLinit_handle("kernel", &c);
    if (strcmp(kind, "gptl") == 0) {
        for (long i = 0; i < n; i++) {
            GPTLstart_handle("solve", &a);
            GPTLstop_handle("solve", &a);
        }
    } else {
        for (long i = 0; i < n / 3; i++) {
            GPTLstart_handle("solve", &a);
            GPTLstart_handle("assemble", &b);
            GPTLstart_handle("kernel", &c);
            GPTLstop_handle("kernel", &c);
            GPTLstop_handle("assemble", &b);
            GPTLstop_handle("solve", &a);
        }
    }
}
#else
static int setup(const char *output) { return sp_setup(output); }
static int finish(const char *output) {
    (void)output;
    return sp_finalize();
}

static void loop_ours(const char *kind, long n) {
    if (strcmp(kind, "handle") == 0) {
        int r = sp_region("solve");
        for (long i = 0; i < n; i++) {
            sp_begin(r);
            sp_end(r);
        }
    } else if (strcmp(kind, "byname") == 0) {
        for (long i = 0; i < n; i++) {
            sp_region_begin("solve");
            sp_region_end("solve");
        }
    } else if (strcmp(kind, "site") == 0) {
        for (long i = 0; i < n; i++) {
            SP_REGION_BEGIN("solve");
            SP_REGION_END("solve");
        }
#ifdef __cplusplus
    } else if (strcmp(kind, "cxx_region") == 0) {
        static const scope_profiler::region solve("solve");
        for (long i = 0; i < n; i++) {
            scope_profiler::scope s(solve);
        }
    } else if (strcmp(kind, "cxx_scope") == 0) {
        for (long i = 0; i < n; i++) {
            SP_SCOPE("solve");
        }
#endif
    } else {
        int a = sp_region("solve"), b = sp_region("assemble"), c = sp_region("kernel");
        for (long i = 0; i < n / 3; i++) {
            sp_begin(a);
            sp_begin(b);
            sp_begin(c);
            sp_end(c);
            sp_end(b);
            sp_end(a);
        }
    }
}
#endif

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s KIND N OUTPUT\n", argv[0]);
        return 2;
    }
    const char *kind = argv[1], *output = argv[3];
    long n = strtol(argv[2], NULL, 10);
    bool baseline = strcmp(kind, "rdtsc") == 0 || strcmp(kind, "clock_gettime") == 0;
    if (!baseline && setup(output) != 0) {
        fprintf(stderr, "%s: setup failed\n", kind);
        return 1;
    }
    long pairs = strstr(kind, "nested") ? n / 3 * 3 : n;
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    double t0 = clock_s(CLOCK_MONOTONIC);
    if (strcmp(kind, "rdtsc") == 0) loop_rdtsc(n);
    else if (strcmp(kind, "clock_gettime") == 0) loop_clock_gettime(n);
    else loop_ours(kind, n);
    double t1 = clock_s(CLOCK_MONOTONIC);
    double c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    int status = baseline ? 0 : finish(output);
    double t2 = clock_s(CLOCK_MONOTONIC);
    fprintf(stderr,
            "RESULT loop_ns_per_pair=%.3f loop_cpu_ns_per_pair=%.3f finalize_s=%.3f pairs=%ld "
            "status=%d\n",
            1e9 * (t1 - t0) / (double)pairs, 1e9 * (c1 - c0) / (double)pairs, t2 - t1, pairs,
            status);
    return 0;
}
