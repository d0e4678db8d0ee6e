/*
 * merge_bench_record - the native input of the merge benchmark: EVENTS
 * calls recorded by the C core as OUTER calls of "bench:outer", each with
 * three "bench:inner" calls inside (so 4 events per outer call).
 *
 *   merge_bench_record OUT EVENTS
 */
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: merge_bench_record OUT EVENTS\n");
        return 2;
    }
    long outer = atol(argv[2]) / 4;
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    int out = sp_region("bench:outer"), in = sp_region("bench:inner");
    volatile double sink = 0;
    for (long i = 0; i < outer; i++) {
        sp_begin(out);
        for (int k = 0; k < 3; k++) {
            sp_begin(in);
            sink += (double)k * 0.5;
            sp_end(in);
        }
        sp_end(out);
    }
    return sp_finalize() == SP_OK ? 0 : 1;
}
