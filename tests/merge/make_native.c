/*
 * make_native - record a small native profile with the C core, for the
 * merge tests: regions "native:outer" > "native:inner" (names distinct
 * from every fixture's), N inner calls per outer call, so that big N spans
 * several read blocks of the merge.
 *
 *   make_native OUT [OUTER_CALLS [INNER_PER_OUTER]]
 */
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: make_native OUT [OUTER [INNER]]\n");
        return 2;
    }
    long outer = argc > 2 ? atol(argv[2]) : 3;
    long inner = argc > 3 ? atol(argv[3]) : 2;
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.label = "native-test";
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    int in = sp_region("native:inner");
    for (long i = 0; i < outer; i++) {
        sp_region_begin("native:outer");
        for (long k = 0; k < inner; k++) {
            sp_begin(in);
            sp_end(in);
        }
        sp_region_end("native:outer");
    }
    return sp_finalize() == SP_OK ? 0 : 1;
}
