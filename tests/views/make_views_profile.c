/*
 * make_views_profile - record profiles for the views tests through the
 * public C API.
 *
 *   make_views_profile names OUT   regions whose names need escaping in
 *                                  every output language (quotes, <, &,
 *                                  a newline, a ';', invalid UTF-8), nested,
 *                                  on the main thread and one worker
 *   make_views_profile calls N OUT  N calls of a nested pair of regions
 *                                  (N/2 outer, N/2 inner), for the
 *                                  timeline's thinning and the benchmark
 *   make_views_profile depth N OUT  alternating recursion a > b > a > ...
 *                                  N calls deep, for the depth caps of the
 *                                  folded stacks and the SVG
 *   make_views_profile tree PREFIX OUT  PREFIX:main > PREFIX:flux_row >
 *                                  PREFIX:leaf, ~60 ms: one of two runs
 *                                  merged with --allow-disjoint
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scope_profiler.h"

/* The names the tests expect back; views_test.py spells them too. */
static const char *const names[] = {
    "quote \"q\" and 'a'",
    "<script>alert(1)</script>",
    "a & b < c > d",
    "line1\nline2",
    "bad \xff byte",
    "semi;colon",
};
enum { N_NAMES = sizeof names / sizeof *names };

/* Some work inside every region, so that none is too narrow to be drawn
 * in the flame graph (frames under 1/5000 of the root are left out). */
static void spin(void) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000);
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        sp_region_begin(names[0]);
        sp_region_begin(names[4]);
        spin();
        sp_region_end(names[4]);
        sp_region_end(names[0]);
    }
    return NULL;
}

static int setup(const char *path) {
    sp_options options;
    sp_options_init(&options);
    options.file_path = path;
    options.label = "views <test> & \"names\"";
    options.quiet = 1;
    return sp_setup_with_options(&options);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "names")) {
        if (setup(argv[2]) != SP_OK) return 1;
        sp_region_begin(names[1]);
        for (int i = 0; i < 2; i++) {
            sp_region_begin(names[2]);
            sp_region_begin(names[3]);
            spin();
            sp_region_end(names[3]);
            sp_region_begin(names[5]);
            spin();
            sp_region_end(names[5]);
            sp_region_end(names[2]);
        }
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
        pthread_join(t, NULL);
        sp_region_end(names[1]);
        return sp_finalize() == SP_OK ? 0 : 1;
    }
    if (argc == 4 && !strcmp(argv[1], "calls")) {
        long n = atol(argv[2]);
        if (n < 2 || setup(argv[3]) != SP_OK) return 1;
        int outer = sp_region("outer"), inner = sp_region("inner");
        sp_region_begin("main");
        for (long i = 0; i < n / 2; i++) {
            sp_begin(outer);
            sp_begin(inner);
            sp_end(inner);
            sp_end(outer);
        }
        sp_region_end("main");
        return sp_finalize() == SP_OK ? 0 : 1;
    }
    if (argc == 4 && !strcmp(argv[1], "depth")) {
        long n = atol(argv[2]);
        if (n < 1 || setup(argv[3]) != SP_OK) return 1;
        int h[2] = {sp_region("a"), sp_region("b")};
        for (long i = 0; i < n; i++) sp_begin(h[i & 1]);
        spin(); /* the innermost call has time of its own */
        for (long i = n; i-- > 0;) sp_end(h[i & 1]);
        return sp_finalize() == SP_OK ? 0 : 1;
    }
    if (argc == 4 && !strcmp(argv[1], "tree")) {
        /* PREFIX:main > PREFIX:flux_row (x20) > PREFIX:leaf (x2): one run
         * of an unrelated program, ~60 ms, for two runs whose times
         * overlap when started together (views_tree_test.py). */
        const char *prefix = argv[2];
        char main_name[64], row_name[64], leaf_name[64];
        snprintf(main_name, sizeof main_name, "%s:main", prefix);
        snprintf(row_name, sizeof row_name, "%s:flux_row", prefix);
        snprintf(leaf_name, sizeof leaf_name, "%s:leaf", prefix);
        if (setup(argv[3]) != SP_OK) return 1;
        sp_region_begin(main_name);
        for (int i = 0; i < 20; i++) {
            sp_region_begin(row_name);
            for (int k = 0; k < 2; k++) {
                sp_region_begin(leaf_name);
                for (int r = 0; r < 50; r++) spin();
                sp_region_end(leaf_name);
            }
            for (int r = 0; r < 50; r++) spin();
            sp_region_end(row_name);
        }
        sp_region_end(main_name);
        return sp_finalize() == SP_OK ? 0 : 1;
    }
    fprintf(stderr, "usage: make_views_profile names OUT | calls N OUT | depth N OUT | "
                    "tree PREFIX OUT\n");
    return 2;
}
