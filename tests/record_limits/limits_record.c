/* limits_record CASE OUT.h5 (issue 29 item 11), checked by check_limits.py:
 *   long_name     sp_region_begin_n / sp_region_end_n / sp_region_n with a
 *                 length of SIZE_MAX (and 2 MiB): refused with
 *                 SP_ERR_INVALID_ARGUMENT, nothing read past the name,
 *                 nothing recorded; one "ok" region is recorded around it.
 *   open_threads  128 threads each leave 3 calls open at finalize: the
 *                 diagnostics stay capped, then one line gives the total. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <scope_profiler.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define THREADS 128

static pthread_barrier_t all_open;
static pthread_barrier_t finalized;

static void *leave_open(void *arg) {
    (void)arg;
    sp_region_begin("open.outer");
    sp_region_begin("open.middle");
    sp_region_begin("open.inner");
    pthread_barrier_wait(&all_open);
    pthread_barrier_wait(&finalized); /* still inside the three calls */
    return NULL;
}

static int long_name(void) {
    int failures = 0;
    const char name[] = "short";
    sp_region_begin("ok");
    int status = sp_region_begin_n(name, SIZE_MAX);
    if (status != SP_ERR_INVALID_ARGUMENT) {
        printf("begin_n(SIZE_MAX) returned %d\n", status);
        failures++;
    }
    status = sp_region_end_n(name, SIZE_MAX);
    if (status != SP_ERR_INVALID_ARGUMENT) {
        printf("end_n(SIZE_MAX) returned %d\n", status);
        failures++;
    }
    if (sp_region_n(name, SIZE_MAX) != SP_INVALID_REGION) {
        printf("sp_region_n(SIZE_MAX) issued a handle\n");
        failures++;
    }
    if (sp_region_begin_n(name, (size_t)2 << 20) != SP_ERR_INVALID_ARGUMENT) failures++;
    if (sp_region_end("ok") != SP_OK) {
        printf("the enclosing call did not end normally\n");
        failures++;
    }
    return failures;
}

static int open_threads(void) {
    pthread_t threads[THREADS];
    pthread_barrier_init(&all_open, NULL, THREADS + 1);
    pthread_barrier_init(&finalized, NULL, THREADS + 1);
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&threads[i], NULL, leave_open, NULL) != 0) return 1;
    pthread_barrier_wait(&all_open);
    int status = sp_finalize();
    pthread_barrier_wait(&finalized);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    printf("finalize=%d\n", status);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3 || sp_setup(argv[2]) != SP_OK) return 2;
    if (strcmp(argv[1], "long_name") == 0) {
        int failures = long_name();
        int status = sp_finalize();
        printf("failures=%d finalize=%d\n", failures, status);
        return failures || status != SP_OK ? 1 : 0;
    }
    if (strcmp(argv[1], "open_threads") == 0) return open_threads();
    return 2;
}
