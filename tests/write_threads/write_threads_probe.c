/*
 * write_threads_probe.c - a recorded run whose finalize writes compressed
 * event columns with the writer's threads (check_write_threads.py).
 *
 *   write_threads_probe OUTPUT CALLS
 *
 * Records CALLS calls (a > b nested, plus a second thread's calls) and
 * finalizes to OUTPUT, then prints "status=S threads=T": sp_finalize's
 * status and the threads the process still has, counted from 1 for the
 * threads it had before finalize (1: every writer thread was joined, on
 * success and on failure alike).
 *
 * Faults, chosen by the environment (0 or unset: none). This executable
 * exports the entry points below (ENABLE_EXPORTS), so the library's calls
 * resolve here first, count, fail when their turn comes and otherwise
 * forward (dlsym RTLD_NEXT); the library is not changed for the test:
 *   PROBE_FAIL_CHUNK_AT=N       the N-th H5Dwrite_chunk fails
 *   PROBE_FAIL_COMPRESS_AT=N    the N-th libdeflate_zlib_compress or
 *                               libdeflate_deflate_compress returns 0 (the
 *                               encoder uses the second for the front planes
 *                               of a chunk, format/deflate_planes.c)
 *   PROBE_FAIL_COMPRESSOR_AT=N  the N-th libdeflate_alloc_compressor is NULL
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

typedef int64_t hid_t;
typedef int herr_t;
typedef unsigned long long hsize_t;

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "write_threads_probe: %s not found\n", name);
        exit(3);
    }
    return f;
}

/* Whether this call (counted in `seen`) is the one the variable names. */
static int turn(const char *variable, atomic_long *seen) {
    const char *value = getenv(variable);
    long at = value ? atol(value) : 0;
    return atomic_fetch_add(seen, 1) + 1 == at;
}

static atomic_long chunk_calls, compress_calls, compressor_calls;

/* The real entry points, resolved in main before any thread starts (the
 * compressor runs on the writer's threads). */
static herr_t (*next_write_chunk)(hid_t, hid_t, uint32_t, const hsize_t *, size_t, const void *);
static size_t (*next_compress)(void *, const void *, size_t, void *, size_t);
static size_t (*next_raw_compress)(void *, const void *, size_t, void *, size_t);
static void *(*next_alloc_compressor)(int);

herr_t H5Dwrite_chunk(hid_t dset, hid_t dxpl, uint32_t filters, const hsize_t *offset,
                      size_t size, const void *buf);
size_t libdeflate_zlib_compress(void *compressor, const void *in, size_t in_bytes, void *out,
                                size_t out_bytes);
size_t libdeflate_deflate_compress(void *compressor, const void *in, size_t in_bytes, void *out,
                                   size_t out_bytes);
void *libdeflate_alloc_compressor(int level);

herr_t H5Dwrite_chunk(hid_t dset, hid_t dxpl, uint32_t filters, const hsize_t *offset,
                      size_t size, const void *buf) {
    if (turn("PROBE_FAIL_CHUNK_AT", &chunk_calls)) return -1;
    return next_write_chunk(dset, dxpl, filters, offset, size, buf);
}

size_t libdeflate_zlib_compress(void *compressor, const void *in, size_t in_bytes, void *out,
                                size_t out_bytes) {
    if (turn("PROBE_FAIL_COMPRESS_AT", &compress_calls)) return 0;
    return next_compress(compressor, in, in_bytes, out, out_bytes);
}

size_t libdeflate_deflate_compress(void *compressor, const void *in, size_t in_bytes, void *out,
                                   size_t out_bytes) {
    if (turn("PROBE_FAIL_COMPRESS_AT", &compress_calls)) return 0;
    return next_raw_compress(compressor, in, in_bytes, out, out_bytes);
}

void *libdeflate_alloc_compressor(int level) {
    if (turn("PROBE_FAIL_COMPRESSOR_AT", &compressor_calls)) return NULL;
    return next_alloc_compressor(level);
}

static int live_threads(void) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -1;
    int count = 0;
    for (struct dirent *e; (e = readdir(dir));)
        if (e->d_name[0] != '.') count++;
    closedir(dir);
    return count;
}

static long calls;

static void *worker(void *arg) {
    (void)arg;
    int w = sp_region("worker");
    for (long i = 0; i < calls / 4; i++) {
        sp_begin(w);
        sp_end(w);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: write_threads_probe OUTPUT CALLS\n");
        return 2;
    }
    calls = atol(argv[2]);
    *(void **)&next_write_chunk = real("H5Dwrite_chunk");
    *(void **)&next_compress = real("libdeflate_zlib_compress");
    *(void **)&next_raw_compress = real("libdeflate_deflate_compress");
    *(void **)&next_alloc_compressor = real("libdeflate_alloc_compressor");
    int status = sp_setup(argv[1]);
    if (status != SP_OK) return 1;
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
    int a = sp_region("a"), b = sp_region("b");
    for (long i = 0; i < calls / 2; i++) {
        sp_begin(a);
        if (i % 2 == 0) {
            sp_begin(b);
            sp_end(b);
        }
        sp_end(a);
    }
    pthread_join(thread, NULL);
    /* counted against the threads before finalize, not an absolute 1: a
     * sanitizer's runtime (TSan) keeps a background thread of its own */
    int before = live_threads();
    status = sp_finalize();
    printf("status=%d threads=%d\n", status, live_threads() - before + 1);
    return 0;
}
