/*
 * make_profile - record a small native profile with the C library for the
 * scope-export and scope-check tests: nested regions on the main thread
 * and on two worker threads (so the file has thread_ids and a thread
 * table), and one region whose name needs CSV quoting.
 *
 *   make_profile OUT
 *
 * Workers start after the main thread's first calls and are joined before
 * finalize, so every call is closed and the tree is complete.
 */
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

static void *worker(void *arg) {
    long n = (long)(size_t)arg;
    int work = sp_region("worker");
    for (long i = 0; i < n; i++) {
        sp_begin(work);
        sp_region_begin("worker.inner");
        sp_region_end("worker.inner");
        sp_region_begin("worker.inner");
        sp_region_end("worker.inner");
        sp_end(work);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_profile OUT\n");
        return 2;
    }
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.label = "tools-test";
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    sp_region_begin("main");
    for (int i = 0; i < 3; i++) {
        sp_region_begin("step");
        sp_region_begin("io \"write\", phase");  /* quoted in CSV */
        sp_region_end("io \"write\", phase");
        sp_region_end("step");
    }
    pthread_t threads[2];
    for (int t = 0; t < 2; t++)
        if (pthread_create(&threads[t], NULL, worker, (void *)(size_t)(4 + t)) != 0) return 1;
    sp_region_begin("step");
    sp_region_end("step");
    for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
    sp_region_end("main");
    return sp_finalize() == SP_OK ? 0 : 1;
}
