/*
 * make_calls - record a large profile for the views benchmark through the
 * library: CALLS calls in all, on THREADS threads, each thread a loop of
 * step > (compute > kernel, exchange) nesting, so the exports see real
 * lanes, depth and several regions.
 *
 *   make_calls OUT CALLS [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

static long iterations; /* per thread; 4 calls each */

static void *work(void *arg) {
    (void)arg;
    int step = sp_region("step"), compute = sp_region("compute"), kernel = sp_region("kernel"),
        exchange = sp_region("exchange");
    for (long i = 0; i < iterations; i++) {
        sp_begin(step);
        sp_begin(compute);
        sp_begin(kernel);
        sp_end(kernel);
        sp_end(compute);
        sp_begin(exchange);
        sp_end(exchange);
        sp_end(step);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: make_calls OUT CALLS [THREADS]\n");
        return 2;
    }
    long calls = atol(argv[2]);
    int threads = argc > 3 ? atoi(argv[3]) : 4;
    if (calls < 4 || threads < 1 || threads > 64) return 2;
    iterations = calls / 4 / threads;
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.label = "views-bench";
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    pthread_t t[64];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, work, NULL) != 0) return 1;
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    return sp_finalize() == SP_OK ? 0 : 1;
}
