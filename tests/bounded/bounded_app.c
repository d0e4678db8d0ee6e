/*
 * bounded_app.c - a program for the bounded-trace checks (check_bounded.py):
 * records nested calls on several threads with whatever limit and overflow
 * the environment sets, then finalizes.
 *
 *   bounded_app PATH CALLS THREADS   record CALLS outer calls per thread
 *                                     (each with 2 nested), print the status
 *   bounded_app PATH forever          record until killed, printing "ready"
 *                                     once the first chunks were flushed
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

static long calls_per_thread;

static void *record(void *unused) {
    (void)unused;
    int outer = sp_region("outer"), inner = sp_region("inner"), leaf = sp_region("leaf");
    for (long i = 0; i < calls_per_thread; i++) {
        sp_begin(outer);
        sp_begin(inner);
        sp_begin(leaf);
        sp_end(leaf);
        sp_end(inner);
        sp_end(outer);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bounded_app PATH CALLS THREADS | PATH forever\n");
        return 2;
    }
    if (sp_setup(argv[1]) != SP_OK) return 3;
    if (strcmp(argv[2], "forever") == 0) {
        int r = sp_region("spin");
        for (long i = 0;; i++) {
            sp_begin(r);
            sp_end(r);
            if (i == 4000000) {
                printf("ready\n");
                fflush(stdout);
            }
        }
    }
    calls_per_thread = atol(argv[2]);
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    pthread_t ids[64];
    for (int t = 1; t < threads && t < 64; t++) pthread_create(&ids[t], NULL, record, NULL);
    record(NULL);
    for (int t = 1; t < threads && t < 64; t++) pthread_join(ids[t], NULL);
    printf("finalizing\n");
    fflush(stdout);
    int status = sp_finalize();
    printf("status=%d\n", status);
    return 0;
}
