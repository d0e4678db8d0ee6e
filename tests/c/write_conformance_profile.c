/*
 * write_conformance_profile.c - records a small but complete run (nesting,
 * recursion, two threads, full metadata, a label) into profile.h5 for
 * check_conformance.py, and writes markers.txt: for every call of the
 * region "marker", the clock readings just before its begin and just after
 * its end, so the checker can verify decoded timestamps independently.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "scope_profiler.h"

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int fib(int n) {
    sp_region_begin("fib");
    int result = n < 2 ? n : fib(n - 1) + fib(n - 2);
    sp_region_end("fib");
    return result;
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 50; i++) {
        sp_region_begin("worker.task");
        sp_region_begin("worker.inner");
        sp_region_end("worker.inner");
        sp_region_end("worker.task");
    }
    return NULL;
}

int main(void) {
    sp_options options;
    sp_options_init(&options);
    options.file_path = "profile.h5";
    options.label = "conformance";
    options.metadata_detail = SP_METADATA_FULL;
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    FILE *markers = fopen("markers.txt", "w");
    if (!markers) return 1;
    int marker = sp_region("marker");
    sp_region_begin("main");
    for (int step = 0; step < 5; step++) {
        long long before = now_ns();
        sp_begin(marker);
        sp_region_begin("nested");
        sp_region_end("nested");
        sp_end(marker);
        long long after = now_ns();
        fprintf(markers, "%lld %lld\n", before, after);
    }
    fib(6);
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
    worker(NULL);
    pthread_join(thread, NULL);
    sp_region_end("main");
    fclose(markers);
    return sp_finalize() == SP_OK ? 0 : 1;
}
