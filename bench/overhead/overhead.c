/*
 * overhead.c - what one begin/end pair costs, in one program run.
 *
 *     sp_bench_overhead [pairs] [repetitions]     (defaults 2000000, 5)
 *     sp_bench_overhead --cold-report [pairs] [rounds]  (20000000, 3)
 *
 * The first form: warm figures, sessions recycling each other's memory.
 * The second: what a real run pays, ONE long session per process on cold
 * memory, for the TSC and the CLOCK_MONOTONIC clock, interleaved with the
 * baseline (see cold_report below); bench/overhead/run.sh runs both.
 *
 * Rows (ns per begin/end pair, best of the repetitions, each repetition a
 * fresh sp_setup .. sp_finalize session with write_file=0 and quiet=1, so
 * nothing is written or printed and memory does not pile up):
 *
 *   baseline        two clock_gettime(CLOCK_MONOTONIC): the floor, since a
 *                   pair must read the clock twice
 *   call floor      two calls of an empty non-inlined function: what any
 *                   out-of-line begin/end costs here (context for "disabled")
 *   C handle        sp_begin / sp_end
 *   C by-name       sp_region_begin / sp_region_end
 *   disabled        sp_begin / sp_end (and by name) after sp_setup under
 *                   SCOPE_PROFILER_DISABLE=1: a run with profiling off
 *   compiled out    the handle and by-name calls built with
 *                   SCOPE_PROFILER_DISABLED (overhead_compiled_out.c): the
 *                   "disabled build" of the goal
 *   Fortran handle  the module's sp_begin / sp_end (overhead_kernels.f90)
 *   Fortran by-name the module's sp_region_begin / sp_region_end
 *
 * and bytes per recorded call: the growth of the resident set while one
 * session records `pairs` calls (the core keeps 24-byte events in chunks),
 * measured first, before freed chunks of other sessions stay resident.
 * The goals are checked and printed; the exit status is 0 either way (a
 * benchmark on a shared machine is a measurement, not a test).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, setenv under -std=c11 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "scope_profiler.h"

void compiled_out_pairs(int region, int64_t pairs);

#ifdef SP_BENCH_FORTRAN
void fortran_handle_pairs(int region, int64_t pairs);
void fortran_name_pairs(int64_t pairs);
#endif

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
}

/* ---- the timed loops ----------------------------------------------------- */

typedef enum { PROFILING_ON, PROFILING_DISABLED } mode;

typedef struct loop_args {
    int region;
    int64_t pairs;
} loop_args;

/* Keeps the baseline's clock reads from being optimised away. */
static volatile int64_t sink;

static void baseline_pairs(const loop_args *a) {
    int64_t sum = 0;
    struct timespec ts;
    for (int64_t i = 0; i < a->pairs; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += ts.tv_nsec;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += ts.tv_nsec;
    }
    sink = sum;
}

/* Two calls of an empty function that cannot be inlined: the cost of any
 * out-of-line call pair on this machine, the floor of the disabled path. */
__attribute__((noinline)) static void empty_call(int region) {
    __asm__ volatile("" : : "r"(region) : "memory");
}

static void empty_pairs(const loop_args *a) {
    for (int64_t i = 0; i < a->pairs; i++) {
        empty_call(a->region);
        empty_call(a->region);
    }
}

static void c_handle_pairs(const loop_args *a) {
    for (int64_t i = 0; i < a->pairs; i++) {
        sp_begin(a->region);
        sp_end(a->region);
    }
}

static void c_name_pairs(const loop_args *a) {
    for (int64_t i = 0; i < a->pairs; i++) {
        sp_region_begin("bench_by_name");
        sp_region_end("bench_by_name");
    }
}

static void compiled_out_loop(const loop_args *a) { compiled_out_pairs(a->region, a->pairs); }

#ifdef SP_BENCH_FORTRAN
static void f_handle_pairs(const loop_args *a) { fortran_handle_pairs(a->region, a->pairs); }
static void f_name_pairs(const loop_args *a) { fortran_name_pairs(a->pairs); }
#endif

static int start_session(mode m) {
    if (m == PROFILING_DISABLED) setenv("SCOPE_PROFILER_DISABLE", "1", 1);
    else unsetenv("SCOPE_PROFILER_DISABLE");
    sp_options options;
    sp_options_init(&options);
    options.write_file = 0;
    options.quiet = 1;
    int status = sp_setup_with_options(&options);
    if (status != SP_OK) fprintf(stderr, "sp_setup_with_options: %s\n", sp_error_string(status));
    if (status == SP_OK && (m == PROFILING_ON) != (sp_is_active() != 0)) {
        fprintf(stderr, "profiling is %sactive, expected otherwise\n", sp_is_active() ? "" : "not ");
        status = SP_ERR_UNSUPPORTED;
    }
    return status;
}

/* Best ns per pair over `repetitions` sessions; < 0 on a setup failure.
 * The first pairs/16 of each session are a warm-up (thread state, name
 * cache, first chunk) and are not timed. */
static double time_loop(void (*loop)(const loop_args *), mode m, int region, int64_t pairs,
                        int repetitions) {
    double best = -1.0;
    for (int r = 0; r < repetitions; r++) {
        if (start_session(m) != SP_OK) return -1.0;
        loop(&(loop_args){region, pairs / 16});
        int64_t t0 = now_ns();
        loop(&(loop_args){region, pairs});
        int64_t t1 = now_ns();
        sp_finalize();
        double ns = (double)(t1 - t0) / (double)pairs;
        if (best < 0 || ns < best) best = ns;
    }
    unsetenv("SCOPE_PROFILER_DISABLE");
    return best;
}

/* ---- memory per call ------------------------------------------------------- */

static long resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long pages_total = 0, pages_resident = 0;
    int ok = fscanf(f, "%ld %ld", &pages_total, &pages_resident) == 2;
    fclose(f);
    return ok ? pages_resident * sysconf(_SC_PAGESIZE) : -1;
}

/* Resident-set growth per call while one session records `pairs` calls. */
static double bytes_per_call(int region, int64_t pairs) {
    if (start_session(PROFILING_ON) != SP_OK) return -1.0;
    c_handle_pairs(&(loop_args){region, 1}); /* thread state exists before */
    long before = resident_bytes();
    c_handle_pairs(&(loop_args){region, pairs});
    long after = resident_bytes();
    sp_finalize();
    if (before < 0 || after < 0) return -1.0;
    return (double)(after - before) / (double)pairs;
}

/* ---- report -------------------------------------------------------------- */

static void row(const char *what, double ns, double baseline) {
    if (ns < 0) {
        printf("  %-28s %9s\n", what, "failed");
        return;
    }
    printf("  %-28s %9.2f ns   %5.2fx baseline\n", what, ns, ns / baseline);
}

static int goal(const char *what, int met, const char *detail) {
    printf("  [%s] %-44s %s\n", met ? "met " : "MISS", what, detail);
    return met;
}

/* ---- one long session on cold memory ----------------------------------------
 *
 * What a real run pays: ONE session recording `pairs` calls into fresh
 * memory, in a fresh process (no pages recycled from an earlier session),
 * with the clock the run would use. The parent starts one child per
 * (clock, path) and round, interleaved, and compares each child with the
 * baseline child of the same round. */

typedef struct cold_result {
    double ns;                 /* per pair */
    double faults_per_4096;    /* minor faults per 4096 recorded calls */
    double rss_per_call;       /* bytes of resident-set growth per call */
} cold_result;

static long minor_faults(void) {
    struct rusage usage;
    return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_minflt : -1;
}

/* The child: one session, timed whole, printed as one line. */
static int cold_child(const char *path, const char *clock, int64_t pairs) {
    int handle = sp_region("bench_handle");
    void (*loop)(const loop_args *) = NULL;
    bool profiled = true;
    if (strcmp(path, "baseline") == 0) loop = baseline_pairs, profiled = false;
    else if (strcmp(path, "c_handle") == 0) loop = c_handle_pairs;
    else if (strcmp(path, "c_name") == 0) loop = c_name_pairs;
#ifdef SP_BENCH_FORTRAN
    else if (strcmp(path, "f_handle") == 0) loop = f_handle_pairs;
    else if (strcmp(path, "f_name") == 0) loop = f_name_pairs;
#endif
    if (!loop) return 2;
    if (profiled) {
        sp_options options;
        sp_options_init(&options);
        options.write_file = 0;
        options.quiet = 1;
        options.clock = strcmp(clock, "tsc") == 0 ? SP_CLOCK_TSC : SP_CLOCK_MONOTONIC;
        if (sp_setup_with_options(&options) != SP_OK) return 1;
    }
    long rss0 = resident_bytes(), faults0 = minor_faults();
    int64_t t0 = now_ns();
    loop(&(loop_args){handle, pairs});
    int64_t t1 = now_ns();
    long rss1 = resident_bytes(), faults1 = minor_faults();
    if (profiled) sp_finalize();
    printf("%.3f %.3f %.3f\n", (double)(t1 - t0) / (double)pairs,
           (double)(faults1 - faults0) * 4096.0 / (double)pairs,
           (double)(rss1 - rss0) / (double)pairs);
    return 0;
}

static int run_child(const char *self, const char *path, const char *clock, int64_t pairs,
                     cold_result *out) {
    char command[4096 + 128];
    int length = snprintf(command, sizeof command, "'%s' --cold %s %s %lld", self, path, clock,
                          (long long)pairs);
    if (length < 0 || (size_t)length >= sizeof command) return -1;
    FILE *child = popen(command, "r");
    if (!child) return -1;
    int got = fscanf(child, "%lf %lf %lf", &out->ns, &out->faults_per_4096, &out->rss_per_call);
    int status = pclose(child);
    return got == 3 && status == 0 ? 0 : -1;
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void cold_report(const char *self, int64_t pairs, int rounds) {
    static const char *const clocks[] = {"tsc", "monotonic"};
    static const char *const paths[] = {"c_handle", "c_name",
#ifdef SP_BENCH_FORTRAN
                                        "f_handle", "f_name",
#endif
    };
    enum { PATHS = sizeof paths / sizeof paths[0], MAX_ROUNDS = 16 };
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    double ratio[2][PATHS][MAX_ROUNDS], ns[2][PATHS][MAX_ROUNDS], base_ns[MAX_ROUNDS];
    double faults[2] = {0, 0}, rss[2] = {0, 0};
    for (int r = 0; r < rounds; r++) {
        cold_result base;
        if (run_child(self, "baseline", "monotonic", pairs, &base) != 0) {
            printf("  cold: the baseline child failed\n");
            return;
        }
        base_ns[r] = base.ns;
        for (int c = 0; c < 2; c++)
            for (int p = 0; p < (int)PATHS; p++) {
                cold_result res = {-1, -1, -1};
                run_child(self, paths[p], clocks[c], pairs, &res);
                ns[c][p][r] = res.ns;
                ratio[c][p][r] = res.ns / base.ns;
                if (p == 0 && res.faults_per_4096 > faults[c]) faults[c] = res.faults_per_4096;
                if (p == 0 && res.rss_per_call > rss[c]) rss[c] = res.rss_per_call;
            }
    }
    qsort(base_ns, (size_t)rounds, sizeof *base_ns, by_double);
    printf("one long session on cold memory: %lld pairs per process, %d interleaved rounds,\n"
           "median of the rounds, each against the baseline of its own round "
           "(baseline median %.2f ns)\n",
           (long long)pairs, rounds, base_ns[rounds / 2]);
    double median[2][PATHS], median_ns[2][PATHS];
    for (int c = 0; c < 2; c++)
        for (int p = 0; p < (int)PATHS; p++) {
            qsort(ratio[c][p], (size_t)rounds, sizeof(double), by_double);
            qsort(ns[c][p], (size_t)rounds, sizeof(double), by_double);
            median[c][p] = ratio[c][p][rounds / 2];
            median_ns[c][p] = ns[c][p][rounds / 2];
            printf("  %-10s %-10s %9.2f ns   %5.2fx baseline\n", clocks[c], paths[p],
                   median_ns[c][p], median[c][p]);
        }
    for (int c = 0; c < 2; c++)
        printf("  %-10s C handle: %.2f minor faults per 4096 calls, %.2f B resident per call\n",
               clocks[c], faults[c], rss[c]);
    char detail[160];
    printf("goals (cold, one session):\n");
    snprintf(detail, sizeof detail, "%.2fx", median[0][0]);
    goal("TSC: C handle <= 0.6x baseline", median[0][0] <= 0.6, detail);
    snprintf(detail, sizeof detail, "%.2fx", median[1][0]);
    goal("CLOCK_MONOTONIC: C handle <= 1.1x baseline", median[1][0] <= 1.1, detail);
    for (int c = 0; c < 2; c++) {
        snprintf(detail, sizeof detail, "%s: %+.2f ns", clocks[c], median_ns[c][1] - median_ns[c][0]);
        goal("C by-name <= C handle + 10 ns", median_ns[c][1] <= median_ns[c][0] + 10.0, detail);
#ifdef SP_BENCH_FORTRAN
        snprintf(detail, sizeof detail, "%s: %.2fx", clocks[c], median_ns[c][2] / median_ns[c][0]);
        goal("Fortran handle <= 1.1x C handle", median_ns[c][2] <= 1.1 * median_ns[c][0], detail);
#endif
    }
    snprintf(detail, sizeof detail, "%.2f", faults[0] > faults[1] ? faults[0] : faults[1]);
    goal("<= 1 minor fault per 4096 calls", faults[0] <= 1.0 && faults[1] <= 1.0, detail);
    snprintf(detail, sizeof detail, "%.2f B", rss[0] > rss[1] ? rss[0] : rss[1]);
    goal("<= 34 B resident per call before finalize", rss[0] <= 34.0 && rss[1] <= 34.0, detail);
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--cold") == 0)
        return cold_child(argv[2], argv[3], atoll(argv[4]));
    if (argc >= 2 && strcmp(argv[1], "--cold-report") == 0) {
        int64_t cold_pairs = argc > 2 ? atoll(argv[2]) : 20000000;
        int rounds = argc > 3 ? atoi(argv[3]) : 3;
        char self[4096];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0) return 1;
        self[len] = '\0';
        cold_report(self, cold_pairs, rounds);
        return 0;
    }
    int64_t pairs = argc > 1 ? atoll(argv[1]) : 2000000;
    int repetitions = argc > 2 ? atoi(argv[2]) : 5;
    if (pairs < 16 || repetitions < 1) {
        fprintf(stderr, "usage: sp_bench_overhead [pairs >= 16] [repetitions >= 1]\n");
        return 2;
    }
    int handle = sp_region("bench_handle");
    int name_handle = sp_region("bench_by_name");
    if (handle < 0 || name_handle < 0) {
        fprintf(stderr, "sp_region: %s\n", sp_error_string(sp_last_error()));
        return 1;
    }

    /* Memory first: later sessions free their chunks back to malloc, which
     * keeps those pages resident and would hide the growth. */
    double bytes = bytes_per_call(handle, pairs);
    double floor_ns = time_loop(empty_pairs, PROFILING_DISABLED, handle, pairs, repetitions);
    double base = time_loop(baseline_pairs, PROFILING_DISABLED, handle, pairs, repetitions);
    double c_handle = time_loop(c_handle_pairs, PROFILING_ON, handle, pairs, repetitions);
    double c_name = time_loop(c_name_pairs, PROFILING_ON, handle, pairs, repetitions);
    double off_handle = time_loop(c_handle_pairs, PROFILING_DISABLED, handle, pairs, repetitions);
    double off_name = time_loop(c_name_pairs, PROFILING_DISABLED, handle, pairs, repetitions);
    double compiled_out = time_loop(compiled_out_loop, PROFILING_DISABLED, handle, pairs, repetitions);
    /* counters: two perf events read at every begin and end (system calls,
     * so fewer pairs); last, so the variable cannot leak into other rows */
    setenv("SCOPE_PROFILER_PERF_EVENTS", "task-clock,page-faults", 1);
    double c_perf = time_loop(c_handle_pairs, PROFILING_ON, handle, pairs / 16 + 16, repetitions);
    unsetenv("SCOPE_PROFILER_PERF_EVENTS");
#ifdef SP_BENCH_FORTRAN
    double f_handle = time_loop(f_handle_pairs, PROFILING_ON, handle, pairs, repetitions);
    double f_name = time_loop(f_name_pairs, PROFILING_ON, handle, pairs, repetitions);
    double f_off = time_loop(f_handle_pairs, PROFILING_DISABLED, handle, pairs, repetitions);
#endif

    printf("scope-profiler overhead: %lld pairs, best of %d (ns per begin/end pair)\n",
           (long long)pairs, repetitions);
    row("baseline (2x clock_gettime)", base, base);
    row("2 empty calls (call floor)", floor_ns, base);
    row("C handle", c_handle, base);
    row("C by-name", c_name, base);
    row("C handle + 2 perf events", c_perf, base);
    row("disabled, C handle", off_handle, base);
    row("disabled, C by-name", off_name, base);
    row("compiled out (both APIs)", compiled_out, base);
#ifdef SP_BENCH_FORTRAN
    row("Fortran handle", f_handle, base);
    row("Fortran by-name", f_name, base);
    row("disabled, Fortran handle", f_off, base);
#endif
    printf("  %-28s %9.2f B per recorded call (resident-set growth)\n", "memory", bytes);

    char detail[160];
    printf("goals:\n");
    snprintf(detail, sizeof detail, "%.2fx", c_handle / base);
    goal("C handle <= 1.25x baseline", c_handle <= 1.25 * base, detail);
    snprintf(detail, sizeof detail, "%+.2f ns", c_name - c_handle);
    goal("C by-name <= C handle + 15 ns", c_name <= c_handle + 15.0, detail);
    snprintf(detail, sizeof detail, "%.2f ns (run-time off: %.2f / %.2f ns)", compiled_out,
             off_handle, off_name);
    goal("disabled build <= 2 ns", compiled_out <= 2.0, detail);
    snprintf(detail, sizeof detail, "%.2f B", bytes);
    /* 24 B is the event itself; each chunk adds a 32-byte header and the
     * resident set grows by whole pages, so 1% slack separates "24-byte
     * events" from anything bigger. */
    goal("<= 24 B per call (1% slack: chunk headers, pages)", bytes >= 0 && bytes <= 24.0 * 1.01,
         detail);
#ifdef SP_BENCH_FORTRAN
    snprintf(detail, sizeof detail, "%.2fx", f_handle / c_handle);
    goal("Fortran handle <= 1.15x C handle", f_handle <= 1.15 * c_handle, detail);
    snprintf(detail, sizeof detail, "%.2fx", f_name / c_name);
    goal("Fortran by-name <= 1.3x C by-name", f_name <= 1.3 * c_name, detail);
#else
    printf("  (no Fortran compiler: the Fortran rows were not built)\n");
#endif
    return 0;
}
