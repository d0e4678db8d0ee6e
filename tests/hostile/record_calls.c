/*
 * record_calls.c - record_calls PATH CALLS: a program that records CALLS
 * calls (two regions) and writes PATH at sp_finalize; prints
 * "finalize <status>" and exits 0 (round3_test.py judges the status, the
 * file and the exit: a signal, at any time until the process is gone, is a
 * failure).
 */
#include <scope_profiler.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: record_calls PATH CALLS\n");
        return 2;
    }
    long calls = atol(argv[2]);
    sp_options o;
    sp_options_init(&o);
    o.file_path = argv[1];
    o.quiet = 1;
    if (sp_setup_with_options(&o) != SP_OK) return 3;
    for (long i = 0; i < calls; i++) {
        const char *name = i % 2 ? "a" : "b";
        sp_region_begin(name);
        sp_region_end(name);
    }
    printf("finalize %d\n", sp_finalize());
    return 0;
}
