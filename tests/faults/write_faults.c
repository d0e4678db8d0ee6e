/*
 * write_faults.c - every HDF5 call of the library's write path failed in
 * turn (issue 29): the program records a few regions and finalizes to the
 * path given; SCOPE_PROFILER_TEST_H5_FAIL_AT=N makes the N-th HDF5 call
 * the process makes (of those listed below) fail. It prints
 *   "status=S calls=C injected=I"
 * (sp_finalize's status, HDF5 calls seen, whether the N-th came). The
 * harness (check_write_faults.py) raises N until the failure is no longer
 * reached and checks each run: no crash, the previous file intact when the
 * write failed, a complete file when it succeeded, no temporary left.
 *
 * How: this executable exports the HDF5 entry points the writer uses
 * (ENABLE_EXPORTS), so the library's calls into libhdf5 resolve here
 * first; each counts, fails when its turn comes, and otherwise forwards to
 * libhdf5 (dlsym RTLD_NEXT). Nothing in the library changes for the test,
 * and every call through these entry points is reached, whichever file of
 * the writer makes it. A close that "fails" still closes (like a close
 * whose flush failed), so nothing leaks but the error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

/* HDF5's types, spelled without its header (the test links no HDF5). */
typedef int64_t hid_t;
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;

static long calls_seen = 0;
static long fail_at = -1;
static int injected = 0;

/* Whether this call is the one to fail. */
static int fails(void) {
    if (fail_at < 0) {
        const char *value = getenv("SCOPE_PROFILER_TEST_H5_FAIL_AT");
        fail_at = value && *value ? atol(value) : 0;
    }
    if (++calls_seen != fail_at) return 0;
    injected = 1;
    return 1;
}

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "write_faults: %s not found in libhdf5\n", name);
        exit(3);
    }
    return f;
}

#define FORWARD(ret, name, params, args)                                  \
    ret name params {                                                     \
        static ret(*next) params = NULL;                                  \
        if (!next) *(void **)&next = real(#name);                         \
        if (fails()) return (ret)-1;                                      \
        return next args;                                                 \
    }
#define CLOSE(name)                                                       \
    herr_t name(hid_t id) {                                               \
        static herr_t (*next)(hid_t) = NULL;                              \
        if (!next) *(void **)&next = real(#name);                         \
        herr_t rc = next(id);                                             \
        return fails() ? -1 : rc;                                         \
    }

FORWARD(hid_t, H5Fcreate, (const char *n, unsigned f, hid_t c, hid_t a), (n, f, c, a))
FORWARD(hid_t, H5Gcreate2, (hid_t l, const char *n, hid_t a, hid_t b, hid_t c), (l, n, a, b, c))
FORWARD(hid_t, H5Gopen2, (hid_t l, const char *n, hid_t a), (l, n, a))
FORWARD(hid_t, H5Dcreate2, (hid_t l, const char *n, hid_t t, hid_t s, hid_t a, hid_t b, hid_t c),
        (l, n, t, s, a, b, c))
FORWARD(herr_t, H5Dwrite, (hid_t d, hid_t m, hid_t ms, hid_t fs, hid_t p, const void *b),
        (d, m, ms, fs, p, b))
FORWARD(hid_t, H5Dget_space, (hid_t d), (d))
FORWARD(hid_t, H5Acreate2, (hid_t l, const char *n, hid_t t, hid_t s, hid_t a, hid_t b),
        (l, n, t, s, a, b))
FORWARD(herr_t, H5Awrite, (hid_t a, hid_t t, const void *b), (a, t, b))
FORWARD(hid_t, H5Screate_simple, (int r, const hsize_t *d, const hsize_t *m), (r, d, m))
FORWARD(herr_t, H5Sselect_hyperslab,
        (hid_t s, int op, const hsize_t *a, const hsize_t *b, const hsize_t *c, const hsize_t *d),
        (s, op, a, b, c, d))
FORWARD(hid_t, H5Pcreate, (hid_t c), (c))
FORWARD(herr_t, H5Pset_chunk, (hid_t p, int n, const hsize_t *d), (p, n, d))
FORWARD(herr_t, H5Pset_deflate, (hid_t p, unsigned l), (p, l))
FORWARD(herr_t, H5Fflush, (hid_t o, int s), (o, s))
FORWARD(htri_t, H5Lexists, (hid_t l, const char *n, hid_t a), (l, n, a))
CLOSE(H5Fclose)
CLOSE(H5Dclose)
CLOSE(H5Gclose)
CLOSE(H5Aclose)

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: write_faults OUTPUT\n");
        return 2;
    }
    int status = sp_setup(argv[1]);
    for (int i = 0; status == SP_OK && i < 50; i++) {
        sp_region_begin("outer");
        sp_region_begin("inner");
        sp_region_end("inner");
        sp_region_end("outer");
    }
    if (status == SP_OK) status = sp_finalize();
    printf("status=%d calls=%ld injected=%d\n", status, calls_seen, injected);
    return 0;
}
