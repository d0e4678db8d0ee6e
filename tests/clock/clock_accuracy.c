/* clock_accuracy OUT.h5 SIDE.txt SECONDS: calls recorded with the clock the
 * environment chooses (SCOPE_PROFILER_CLOCK), each bracketed by two
 * clock_gettime(CLOCK_MONOTONIC) reads written to SIDE.txt, with idle gaps
 * of 0-40 ms between calls (sleeping, so no anchor is taken in them) and
 * a second thread recording too. check_clock.py compares every stored
 * start and end with its brackets. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <scope_profiler.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct plan {
    FILE *side;
    const char *region;
    double seconds;
    unsigned seed;
    pthread_mutex_t *lock;
} plan;


static void *record(void *arg) {
    plan *p = arg;
    int64_t until = monotonic_ns() + (int64_t)(p->seconds * 1e9);
    int region = sp_region(p->region);
    while (monotonic_ns() < until) {
        int64_t before = monotonic_ns();
        sp_begin(region);
        unsigned spin = (unsigned)rand_r(&p->seed) % 2000;
        volatile unsigned long sink = 0; /* per thread: the two threads never share it */
        for (unsigned i = 0; i < spin; i++) sink += i;
        sp_end(region);
        int64_t after = monotonic_ns();
        pthread_mutex_lock(p->lock);
        fprintf(p->side, "%s %lld %lld\n", p->region, (long long)before, (long long)after);
        pthread_mutex_unlock(p->lock);
        struct timespec gap = {0, (long)(rand_r(&p->seed) % 40) * 1000000L};
        nanosleep(&gap, NULL);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s OUT.h5 SIDE.txt SECONDS\n", argv[0]);
        return 2;
    }
    FILE *side = fopen(argv[2], "w");
    if (!side || sp_setup(argv[1]) != SP_OK) return 1;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    plan main_plan = {side, "main.call", atof(argv[3]), 1, &lock};
    plan other_plan = {side, "other.call", atof(argv[3]), 2, &lock};
    pthread_t other;
    if (pthread_create(&other, NULL, record, &other_plan) != 0) return 1;
    record(&main_plan);
    pthread_join(other, NULL);
    fclose(side);
    return sp_finalize() == SP_OK ? 0 : 1;
}
