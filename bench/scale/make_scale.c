/*
 * make_scale - record the two pathological shapes of issue 19 through the
 * library, for bench/scale/run.sh:
 *
 *   make_scale regions OUT N   N distinct regions (region.000000 ...),
 *                              each called once under "main" with one
 *                              shared child "leaf": N + 2 regions,
 *                              2N + 1 calls, 2N + 1 call paths
 *   make_scale depth OUT N     alternating recursion a > b > a > ... N
 *                              calls deep (one chain, opened in a loop, so
 *                              the C stack stays flat)
 *
 * Everything goes through the public API, as a user's program would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

static int regions(long n) {
    char name[32];
    int leaf = sp_region("leaf");
    sp_region_begin("main");
    for (long i = 0; i < n; i++) {
        snprintf(name, sizeof name, "region.%06ld", i);
        int h = sp_region(name);
        sp_begin(h);
        sp_begin(leaf);
        sp_end(leaf);
        sp_end(h);
    }
    sp_region_end("main");
    return 0;
}

static int depth(long n) {
    int h[2] = {sp_region("a"), sp_region("b")};
    for (long i = 0; i < n; i++) sp_begin(h[i & 1]);
    for (long i = n; i-- > 0;) sp_end(h[i & 1]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "regions") && strcmp(argv[1], "depth"))) {
        fprintf(stderr, "usage: make_scale regions|depth OUT N\n");
        return 2;
    }
    long n = atol(argv[3]);
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[2];
    options.label = "bench-scale";
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    if (!strcmp(argv[1], "regions")) regions(n);
    else depth(n);
    return sp_finalize() == SP_OK ? 0 : 1;
}
