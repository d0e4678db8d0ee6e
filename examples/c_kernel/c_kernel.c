/*
 * c_kernel - a small C kernel instrumented with libscopeprofiler.
 *
 *     c_kernel [output.h5] [steps]
 *
 * Without an output path the profile goes to $SCOPE_PROFILER_FILE (else
 * profiling_data.h5). A 1-D heat equation advanced by a pool of worker
 * threads, each sweeping its slice of the rod once per step between two
 * barriers, plus an adaptive Simpson quadrature that recurses until its
 * error estimate is small. Region tree of one run:
 *
 *     solve > timestep > sweep        (main thread waits in "sweep")
 *                      > reduce
 *           > integrate > simpson > simpson > ...   (recursion)
 *     slice                            (in every worker thread, per step)
 *
 * Handles are resolved once (sp_region) and used in the loops; names are
 * used where the cost does not matter. pthreads keep the example free of
 * compiler flags: it builds with any C11 compiler on POSIX.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t under -std=c11 */

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

#define CELLS 200000
#define WORKERS 4

/* State shared by the pool; u and u_new are swapped by the main thread
 * between steps, while every worker waits at the start barrier. */
typedef struct pool {
    pthread_barrier_t start, done;
    double *u, *u_new;
    int steps;
} pool;

typedef struct worker {
    pool *shared;
    int first, last;          /* cells [first, last) of the rod */
    double change;            /* max |u_new - u| over the slice, last step */
} worker;

static int region_slice = SP_INVALID_REGION;
static int region_simpson = SP_INVALID_REGION;

/* One explicit step of u_t = u_xx on a slice; each step is one "slice"
 * call on the worker's own thread (a root there: the main thread's
 * "sweep" is open on another thread). */
static void sweep_slice(worker *w) {
    sp_begin(region_slice);
    const double *u = w->shared->u;
    double *u_new = w->shared->u_new;
    double change = 0.0;
    for (int i = w->first; i < w->last; i++) {
        double left = i > 0 ? u[i - 1] : 0.0;
        double right = i < CELLS - 1 ? u[i + 1] : 0.0;
        u_new[i] = u[i] + 0.25 * (left - 2.0 * u[i] + right);
        double d = fabs(u_new[i] - u[i]);
        if (d > change) change = d;
    }
    w->change = change;
    sp_end(region_slice);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    for (int step = 0; step < w->shared->steps; step++) {
        pthread_barrier_wait(&w->shared->start);
        sweep_slice(w);
        pthread_barrier_wait(&w->shared->done);
    }
    return NULL;
}

/* Adaptive Simpson on [a, b]: every call is a child of the call that split
 * its interval, so the file holds the recursion tree. */
static double simpson(double (*f)(double), double a, double b, double whole, double eps,
                      int depth) {
    sp_begin(region_simpson);
    double m = 0.5 * (a + b);
    double left = (m - a) / 6.0 * (f(a) + 4.0 * f(0.5 * (a + m)) + f(m));
    double right = (b - m) / 6.0 * (f(m) + 4.0 * f(0.5 * (m + b)) + f(b));
    double result;
    if (depth <= 0 || fabs(left + right - whole) <= 15.0 * eps)
        result = left + right + (left + right - whole) / 15.0;
    else
        result = simpson(f, a, m, left, 0.5 * eps, depth - 1) +
                 simpson(f, m, b, right, 0.5 * eps, depth - 1);
    sp_end(region_simpson);
    return result;
}

static double bump(double x) { return exp(-50.0 * (x - 0.3) * (x - 0.3)) + sin(3.0 * x); }

int main(int argc, char **argv) {
    const char *path = argc > 1 && argv[1][0] ? argv[1] : NULL;
    int steps = argc > 2 ? atoi(argv[2]) : 50;
    if (steps < 1) {
        fprintf(stderr, "usage: c_kernel [output.h5] [steps >= 1]\n");
        return 2;
    }
    int status = sp_setup(path);
    if (status != SP_OK)
        fprintf(stderr, "c_kernel: sp_setup: %s (running unprofiled)\n", sp_error_string(status));
    region_slice = sp_region("slice");
    region_simpson = sp_region("simpson");

    pool shared = {.u = calloc(CELLS, sizeof(double)),
                   .u_new = calloc(CELLS, sizeof(double)), .steps = steps};
    if (!shared.u || !shared.u_new) {
        fprintf(stderr, "c_kernel: out of memory\n");
        return 1;
    }
    shared.u[CELLS / 2] = 1.0e3;
    /* WORKERS + 1: the main thread passes both barriers with the pool. */
    pthread_barrier_init(&shared.start, NULL, WORKERS + 1);
    pthread_barrier_init(&shared.done, NULL, WORKERS + 1);
    worker workers[WORKERS];
    pthread_t threads[WORKERS];
    for (int k = 0; k < WORKERS; k++) {
        workers[k] = (worker){.shared = &shared, .first = k * CELLS / WORKERS,
                              .last = (k + 1) * CELLS / WORKERS};
        if (pthread_create(&threads[k], NULL, worker_main, &workers[k]) != 0) {
            fprintf(stderr, "c_kernel: cannot start worker threads\n");
            return 1;
        }
    }

    double change = 0.0;
    sp_region_begin("solve");
    for (int step = 0; step < steps; step++) {
        sp_region_begin("timestep");
        sp_region_begin("sweep");
        pthread_barrier_wait(&shared.start);
        pthread_barrier_wait(&shared.done);
        sp_region_end("sweep");

        sp_region_begin("reduce");
        change = 0.0;
        for (int k = 0; k < WORKERS; k++)
            if (workers[k].change > change) change = workers[k].change;
        sp_region_end("reduce");
        double *swap = shared.u;
        shared.u = shared.u_new;
        shared.u_new = swap;
        sp_region_end("timestep");
    }
    for (int k = 0; k < WORKERS; k++) pthread_join(threads[k], NULL);
    sp_region_begin("integrate");
    double integral = simpson(bump, 0.0, 2.0, 0.0, 1e-9, 24);
    sp_region_end("integrate");
    sp_region_end("solve");
    printf("c_kernel: %d steps, last change %.3e, integral %.9f\n", steps, change, integral);
    pthread_barrier_destroy(&shared.start);
    pthread_barrier_destroy(&shared.done);
    free(shared.u);
    free(shared.u_new);

    status = sp_finalize();
    if (status != SP_OK && status != SP_ERR_NOT_ACTIVE) {
        fprintf(stderr, "c_kernel: sp_finalize: %s\n", sp_error_string(status));
        return 1;
    }
    return 0;
}
