/*
 * task_clock_ratio.c - how close Linux perf's task-clock comes to a busy
 * loop's wall time inside a region (bench/counters/run.sh).
 *
 *     sp_bench_task_clock SAMPLES OUTPUT.h5
 *
 * SAMPLES busy loops of 20 ms, each a region with the task-clock counter
 * (SCOPE_PROFILER_PERF_EVENTS semantics through sp_options.perf_events).
 * Prints one line per sample (task-clock / duration) and the best and the
 * median. On an idle machine the ratio is ~1; preemption by other work
 * lowers it. This used to be an assertion of counters.perf_software, which
 * failed under load: a ratio of times is a measurement, so it lives here.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scope_profiler.h"
#include "scope_profiler_results.h"

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: sp_bench_task_clock SAMPLES OUTPUT.h5\n");
        return 2;
    }
    int samples = atoi(argv[1]);
    if (samples < 1 || samples > 1000) return 2;
    sp_options o;
    sp_options_init(&o);
    o.file_path = argv[2];
    o.quiet = 1;
    o.perf_events = "task-clock";
    if (sp_setup_with_options(&o) != SP_OK) return 1;
    char name[32];
    for (int i = 0; i < samples; i++) {
        snprintf(name, sizeof name, "busy.%d", i);
        sp_region_begin(name);
        volatile uint64_t spin = 0;
        for (int64_t end = now_ns() + 20000000; now_ns() < end;) spin++;
        sp_region_end(name);
    }
    if (sp_finalize() != SP_OK) return 1;
    sp_results *res = NULL;
    char msg[512];
    if (sp_results_open(argv[2], 0, &res, msg, sizeof msg) != SP_OK) {
        fprintf(stderr, "%s\n", msg);
        return 1;
    }
    double *ratio = calloc((size_t)samples, sizeof *ratio);
    int found = 0;
    for (size_t r = 0; ratio && r < sp_results_perf_count(res); r++) {
        const char *region;
        size_t counters = 0;
        if (sp_results_perf_record(res, r, NULL, &region, NULL, &counters) != SP_OK) continue;
        long id = sp_results_region_find(res, region);
        long row = id < 0 ? -1 : sp_results_row_find(res, 0, (size_t)id);
        if (row < 0 || strncmp(region, "busy.", 5) != 0) continue;
        const int64_t *d = sp_results_row_durations(res, (size_t)row);
        for (size_t c = 0; c < counters; c++) {
            const char *event;
            uint64_t value;
            if (sp_results_perf_counter(res, r, c, &event, &value) == SP_OK &&
                strcmp(event, "task-clock") == 0 && d && d[0] > 0 && found < samples) {
                ratio[found] = (double)value / (double)d[0];
                printf("%s: task-clock / duration = %.3f\n", region, ratio[found]);
                found++;
            }
        }
    }
    sp_results_close(res);
    if (!found) {
        fprintf(stderr, "no task-clock values (perf events not permitted?)\n");
        free(ratio);
        return 1;
    }
    qsort(ratio, (size_t)found, sizeof *ratio, cmp_double);
    printf("task-clock / duration over %d samples: best %.3f, median %.3f, worst %.3f\n", found,
           ratio[found - 1], ratio[found / 2], ratio[0]);
    free(ratio);
    return 0;
}
