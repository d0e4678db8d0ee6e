/* omp_fork OUT.h5: a parallel region inside the main thread's "fork" call,
 * every team thread recording "work" (4 calls each), while a plain pthread
 * records "io.write" during that same call. check_omp.py reads the file:
 * every "work" call hangs under "fork" (the workers' across threads), and
 * "io.write", not an OpenMP thread, stays a root. */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <pthread.h>
#include <scope_profiler.h>
#include <stdio.h>
#include <time.h>

static void spin(long n) {
    volatile unsigned long sink = 0; /* per call: the team never shares it */
    for (long i = 0; i < n; i++) sink += (unsigned long)i;
}

static void *io_thread(void *arg) {
    (void)arg;
    sp_region_begin("io.write");
    spin(200000);
    sp_region_end("io.write");
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2 || sp_setup(argv[1]) != SP_OK) return 2;
    sp_region_begin("fork");
    pthread_t io;
    pthread_create(&io, NULL, io_thread, NULL);
#pragma omp parallel num_threads(3)
    {
        for (int i = 0; i < 4; i++) {
            sp_region_begin("work");
            spin(100000);
            sp_region_end("work");
        }
    }
    pthread_join(io, NULL);
    sp_region_end("fork");
    printf("threads=3\n");
    return sp_finalize() == SP_OK ? 0 : 1;
}
