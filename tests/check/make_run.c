/*
 * make_run - record a fresh native profile for the scope-check tests:
 * nested regions on the main thread and on three worker threads that run
 * at the same time as the main thread's calls (so their calls overlap in
 * time and only the lane rule keeps them apart), and an MPI-named region
 * in the package's form (docs/FORMAT.md 4.6).
 *
 *   make_run OUT
 */
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

static void *worker(void *arg) {
    long n = (long)(size_t)arg;
    for (long i = 0; i < n; i++) {
        sp_region_begin("worker");
        for (int k = 0; k < 3; k++) {
            sp_region_begin("worker.inner");
            sp_region_begin("leaf");
            sp_region_end("leaf");
            sp_region_end("worker.inner");
        }
        sp_region_end("worker");
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_run OUT\n");
        return 2;
    }
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    sp_region_begin("main");
    pthread_t threads[3];
    for (int t = 0; t < 3; t++)
        if (pthread_create(&threads[t], NULL, worker, (void *)(size_t)(50 + 10 * t)) != 0)
            return 1;
    for (int i = 0; i < 40; i++) {
        sp_region_begin("step");
        sp_region_begin("mpi:allreduce kind=collective bytes=8 peer=-1 root=-1 tag=-1 comm=0 "
                        "lang=native");
        sp_region_begin("leaf");
        sp_region_end("leaf");
        sp_region_end("mpi:allreduce kind=collective bytes=8 peer=-1 root=-1 tag=-1 comm=0 "
                      "lang=native");
        sp_region_end("step");
    }
    for (int t = 0; t < 3; t++) pthread_join(threads[t], NULL);
    sp_region_end("main");
    return sp_finalize() == SP_OK ? 0 : 1;
}
